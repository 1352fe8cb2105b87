// Package postgres opens the catalog on PostgreSQL, for several Hangar
// servers sharing one catalog: the portable SQL of sqldb with numbered
// placeholders, row locks (SELECT … FOR UPDATE) deciding races between
// servers, and an advisory lock so servers starting together migrate once.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"hangar/internal/catalog/sqldb"
)

// migrationLock is an arbitrary advisory lock key owned by Hangar.
const migrationLock = `SELECT pg_advisory_xact_lock(7262, 1)`

// New opens (creating the schema or migrating it) the catalog at dsn, a
// libpq URL or keyword string: postgres://user:pass@host:5432/db?sslmode=disable.
func New(ctx context.Context, dsn string) (*sqldb.Catalog, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	c, err := sqldb.New(ctx, db, sqldb.Dialect{Numbered: true, ForUpdate: "FOR UPDATE",
		IsUnique: isUnique, MigrationLock: migrationLock})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return c, nil
}

// isUnique reports SQLSTATE 23505, unique_violation.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
