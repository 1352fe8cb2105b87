package postgres_test

import (
	"context"
	"sync"
	"testing"

	"hangar/internal/catalog"
	"hangar/internal/catalog/catalogtest"
	"hangar/internal/catalog/postgres"
	"hangar/internal/testenv"
)

func newCatalog(t *testing.T) catalog.Catalog {
	c, err := postgres.New(context.Background(), testenv.PostgresDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConformance(t *testing.T) { catalogtest.Run(t, newCatalog) }

// Servers starting together on an empty database migrate it once.
func TestConcurrentMigration(t *testing.T) {
	db := testenv.PostgresDB(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := postgres.New(context.Background(), db)
			if err == nil {
				c.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := postgres.New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.CreateImage(context.Background(), catalogtest.NewImage("after")); err != nil {
		t.Fatal(err)
	}
}

// A server that cannot reach the database says so.
func TestUnreachable(t *testing.T) {
	_, err := postgres.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err == nil {
		t.Fatal("no error for an unreachable database")
	}
}
