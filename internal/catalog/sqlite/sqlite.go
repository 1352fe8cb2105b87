// Package sqlite opens the embedded catalog: one SQLite file in WAL mode,
// driven by the pure-Go modernc.org/sqlite driver so the binary stays static.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"hangar/internal/catalog/sqldb"
)

// Config says where the database file is.
type Config struct {
	Path string
}

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	if c.Path == "" {
		return errors.New("sqlite: path is required")
	}
	return nil
}

// New opens (creating and migrating) the catalog at cfg.Path.
func New(ctx context.Context, cfg Config) (*sqldb.Catalog, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// Immediate transactions take the write lock up front, so two
	// read-modify-write updates queue on busy_timeout instead of failing
	// with SQLITE_BUSY when both try to upgrade a read lock.
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+cfg.Path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	// Keep connections: opening one runs the pragmas above, which cost
	// more than a query (database/sql keeps only 2 idle by default, so
	// 16 concurrent GETs opened and closed a connection each).
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	c, err := sqldb.New(ctx, db, sqldb.Dialect{IsUnique: isUnique})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", cfg.Path, err)
	}
	return c, nil
}

func isUnique(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}
