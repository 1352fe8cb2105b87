package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/google/uuid"

	"hangar/internal/catalog"
	"hangar/internal/catalog/catalogtest"
	"hangar/internal/catalog/postgres"
)

// dsn is the server scripts/postgres.sh starts (scripts/test.sh exports
// HANGAR_TEST_POSTGRES). Without it the tests skip in a developer's quick
// run and fail under CI=true.
func dsn(t *testing.T) string {
	d := os.Getenv("HANGAR_TEST_POSTGRES")
	if d == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("HANGAR_TEST_POSTGRES is not set: scripts/test.sh starts PostgreSQL for these tests")
		}
		t.Skip("SKIPPED: no PostgreSQL (set HANGAR_TEST_POSTGRES, or run scripts/test.sh)")
	}
	return d
}

// freshDB creates an empty database for one test and drops it after.
func freshDB(t *testing.T) string {
	base := dsn(t)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	name := "hangar_test_" + uuid.NewString()[:8]
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec("DROP DATABASE " + name + " WITH (FORCE)") })
	return withDB(base, name)
}

// withDB points a DSN (URL or keyword form) at another database.
func withDB(base, name string) string {
	if u, err := url.Parse(base); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	return fmt.Sprintf("%s dbname=%s", base, name) // the last keyword wins
}

func newCatalog(t *testing.T) catalog.Catalog {
	c, err := postgres.New(context.Background(), freshDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConformance(t *testing.T) { catalogtest.Run(t, newCatalog) }

// Servers starting together on an empty database migrate it once.
func TestConcurrentMigration(t *testing.T) {
	db := freshDB(t)
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
