package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"hangar/internal/catalog"
	"hangar/internal/catalog/catalogtest"
	"hangar/internal/catalog/sqlite"
)

func newCatalog(t *testing.T) catalog.Catalog {
	c, err := sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConformance(t *testing.T) { catalogtest.Run(t, newCatalog) }

// Reopening runs no migration twice and keeps the data.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	ctx := context.Background()
	c, err := sqlite.New(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	im := catalogtest.NewImage("persist")
	if err := c.CreateImage(ctx, im); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, err = sqlite.New(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.GetImage(ctx, im.ID); err != nil {
		t.Fatal(err)
	}
}
