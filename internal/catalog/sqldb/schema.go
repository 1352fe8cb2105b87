package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// migrations are applied in order, each once; the index+1 is the schema
// version recorded in schema_version. Append, never edit.
var migrations = []string{
	`CREATE TABLE images (
		id VARCHAR(36) PRIMARY KEY,
		name VARCHAR(255),
		disk_format VARCHAR(32),
		container_format VARCHAR(32),
		visibility VARCHAR(16) NOT NULL,
		size BIGINT,
		virtual_size BIGINT,
		status VARCHAR(32) NOT NULL,
		checksum VARCHAR(32),
		os_hash_algo VARCHAR(64),
		os_hash_value VARCHAR(128),
		protected BOOLEAN NOT NULL,
		min_ram BIGINT NOT NULL,
		min_disk BIGINT NOT NULL,
		owner VARCHAR(255),
		os_hidden BOOLEAN NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);
	CREATE INDEX images_created ON images (created_at, id);
	CREATE INDEX images_owner ON images (owner);
	CREATE TABLE image_properties (
		image_id VARCHAR(36) NOT NULL REFERENCES images(id) ON DELETE CASCADE,
		position INTEGER NOT NULL,
		name VARCHAR(255) NOT NULL,
		value TEXT NOT NULL,
		PRIMARY KEY (image_id, name)
	);
	CREATE TABLE image_tags (
		image_id VARCHAR(36) NOT NULL REFERENCES images(id) ON DELETE CASCADE,
		position INTEGER NOT NULL,
		tag VARCHAR(255) NOT NULL,
		PRIMARY KEY (image_id, tag)
	);
	CREATE TABLE image_members (
		image_id VARCHAR(36) NOT NULL REFERENCES images(id) ON DELETE CASCADE,
		member_id VARCHAR(255) NOT NULL,
		status VARCHAR(16) NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL,
		PRIMARY KEY (image_id, member_id)
	);
	CREATE INDEX image_members_member ON image_members (member_id)`,
	`CREATE TABLE transfers (
		id VARCHAR(128) PRIMARY KEY,
		image_id VARCHAR(36) NOT NULL REFERENCES images(id) ON DELETE CASCADE,
		ops VARCHAR(32) NOT NULL,
		size BIGINT NOT NULL,
		timeout BIGINT NOT NULL,
		inactivity_timeout BIGINT NOT NULL,
		expires_at BIGINT NOT NULL,
		phase VARCHAR(16) NOT NULL,
		transferred BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);
	CREATE INDEX transfers_image ON transfers (image_id)`,
	`ALTER TABLE transfers ADD COLUMN done_ranges TEXT NOT NULL DEFAULT '[]'`,
	`ALTER TABLE images ADD COLUMN block_checksum VARCHAR(64)`,
}

func (c *Catalog) migrate(ctx context.Context) error {
	err := c.inTx(ctx, func(tx *sql.Tx) error {
		if err := c.lockMigrations(ctx, tx); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("catalog: migrate: %w", err)
	}
	// Each migration runs in its own transaction that first takes the
	// dialect's migration lock and reads the version again, so servers
	// starting together on one database apply each migration once.
	for {
		done, err := c.migrateOne(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// migrateOne applies the next migration, or reports there is none.
func (c *Catalog) migrateOne(ctx context.Context) (bool, error) {
	done := false
	err := c.inTx(ctx, func(tx *sql.Tx) error {
		if err := c.lockMigrations(ctx, tx); err != nil {
			return err
		}
		var version int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&version); err != nil {
			return err
		}
		if version > len(migrations) {
			return fmt.Errorf("schema version %d is newer than this binary (%d)", version, len(migrations))
		}
		if version == len(migrations) {
			done = true
			return nil
		}
		for _, stmt := range splitStatements(migrations[version]) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %d: %w", version+1, err)
			}
		}
		_, err := tx.ExecContext(ctx, c.q(`INSERT INTO schema_version (version) VALUES (?)`), version+1)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("catalog: migrate: %w", err)
	}
	return done, nil
}

func (c *Catalog) lockMigrations(ctx context.Context, tx *sql.Tx) error {
	if c.d.MigrationLock == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, c.d.MigrationLock)
	return err
}

func splitStatements(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ";") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}
