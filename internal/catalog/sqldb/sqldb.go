// Package sqldb implements catalog.Catalog over database/sql in SQL that both
// SQLite and PostgreSQL accept. Engine differences (placeholders, unique
// violations, row locks) are behind Dialect; the engine packages (sqlite,
// postgres) open the connection and hand it here.
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"hangar/internal/catalog"
)

// Dialect holds what differs between engines.
type Dialect struct {
	// Numbered turns ? placeholders into $1, $2, … (PostgreSQL).
	Numbered bool
	// ForUpdate is appended to the SELECT that starts a read-modify-write.
	ForUpdate string
	// IsUnique reports a unique/primary-key violation.
	IsUnique func(error) bool
	// MigrationLock is run first in each migration transaction to keep
	// servers that start together from migrating at once (PostgreSQL: an
	// advisory lock). SQLite's immediate transactions lock already.
	MigrationLock string
}

// Catalog is the database/sql catalog.
type Catalog struct {
	db *sql.DB
	d  Dialect
}

var _ catalog.Catalog = (*Catalog)(nil)

// New migrates db to the current schema and returns the catalog.
func New(ctx context.Context, db *sql.DB, d Dialect) (*Catalog, error) {
	c := &Catalog{db: db, d: d}
	if err := c.migrate(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Close closes the database.
func (c *Catalog) Close() error { return c.db.Close() }

// q rewrites placeholders for the dialect.
func (c *Catalog) q(query string) string {
	if !c.d.Numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func nanos(t time.Time) int64 { return t.UTC().UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// inTx runs fn in a transaction, committing on success.
func (c *Catalog) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("catalog: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("catalog: commit: %w", err)
	}
	return nil
}

func (c *Catalog) wrapUnique(err error, what string) error {
	if err != nil && c.d.IsUnique != nil && c.d.IsUnique(err) {
		return fmt.Errorf("catalog: %s: %w", what, catalog.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("catalog: %s: %w", what, err)
	}
	return nil
}

func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("catalog: %s: %w", what, catalog.ErrNotFound)
	}
	return fmt.Errorf("catalog: %s: %w", what, err)
}
