package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"hangar/internal/catalog"
)

const imageColumns = `id, name, disk_format, container_format, visibility, size, virtual_size,
	status, checksum, os_hash_algo, os_hash_value, protected, min_ram, min_disk, owner,
	os_hidden, created_at, updated_at, block_checksum`

func imageArgs(im *catalog.Image) []any {
	return []any{im.ID, im.Name, im.DiskFormat, im.ContainerFormat, im.Visibility, im.Size,
		im.VirtualSize, im.Status, im.Checksum, im.OSHashAlgo, im.OSHashValue, im.Protected,
		im.MinRAM, im.MinDisk, im.Owner, im.OSHidden, nanos(im.CreatedAt), nanos(im.UpdatedAt), im.BlockChecksum}
}

type scanner interface{ Scan(dest ...any) error }

func scanImage(s scanner) (*catalog.Image, error) {
	var im catalog.Image
	var name, disk, container, checksum, algo, hash, owner, block sql.NullString
	var size, vsize sql.NullInt64
	var created, updated int64
	err := s.Scan(&im.ID, &name, &disk, &container, &im.Visibility, &size, &vsize,
		&im.Status, &checksum, &algo, &hash, &im.Protected, &im.MinRAM, &im.MinDisk, &owner,
		&im.OSHidden, &created, &updated, &block)
	if err != nil {
		return nil, err
	}
	im.Name, im.DiskFormat, im.ContainerFormat = str(name), str(disk), str(container)
	im.Checksum, im.OSHashAlgo, im.OSHashValue, im.Owner = str(checksum), str(algo), str(hash), str(owner)
	im.Size, im.VirtualSize, im.BlockChecksum = i64(size), i64(vsize), str(block)
	im.CreatedAt, im.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &im, nil
}

func str(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	return &n.String
}

func i64(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

// CreateImage implements catalog.Catalog.
func (c *Catalog) CreateImage(ctx context.Context, im *catalog.Image) error {
	if im.CreatedAt.IsZero() {
		im.CreatedAt = time.Now().UTC()
	}
	if im.UpdatedAt.IsZero() {
		im.UpdatedAt = im.CreatedAt
	}
	return c.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, c.q(`INSERT INTO images (`+imageColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), imageArgs(im)...)
		if err := c.wrapUnique(err, "create image "+im.ID); err != nil {
			return err
		}
		return c.writeChildren(ctx, tx, im)
	})
}

// writeChildren replaces the image's tags and properties.
func (c *Catalog) writeChildren(ctx context.Context, tx *sql.Tx, im *catalog.Image) error {
	for _, stmt := range []string{`DELETE FROM image_tags WHERE image_id = ?`, `DELETE FROM image_properties WHERE image_id = ?`} {
		if _, err := tx.ExecContext(ctx, c.q(stmt), im.ID); err != nil {
			return fmt.Errorf("catalog: write %s: %w", im.ID, err)
		}
	}
	for i, t := range im.Tags {
		_, err := tx.ExecContext(ctx, c.q(`INSERT INTO image_tags (image_id, position, tag) VALUES (?, ?, ?)`), im.ID, i, t)
		if err != nil {
			return fmt.Errorf("catalog: tag %q: %w", t, err)
		}
	}
	for i, p := range im.Properties {
		_, err := tx.ExecContext(ctx, c.q(`INSERT INTO image_properties (image_id, position, name, value) VALUES (?, ?, ?, ?)`), im.ID, i, p.Key, p.Value)
		if err != nil {
			return fmt.Errorf("catalog: property %q: %w", p.Key, err)
		}
	}
	return nil
}

// GetImage implements catalog.Catalog.
func (c *Catalog) GetImage(ctx context.Context, id string) (*catalog.Image, error) {
	return c.getImage(ctx, c.db, id, "")
}

func (c *Catalog) getImage(ctx context.Context, db querier, id, suffix string) (*catalog.Image, error) {
	row := db.QueryRowContext(ctx, c.q(`SELECT `+imageColumns+` FROM images WHERE id = ? `+suffix), id)
	im, err := scanImage(row)
	if err != nil {
		return nil, notFound(err, "image "+id)
	}
	if err := c.loadChildren(ctx, db, []*catalog.Image{im}); err != nil {
		return nil, err
	}
	return im, nil
}

// loadChildren fills tags and properties of images with two queries.
func (c *Catalog) loadChildren(ctx context.Context, db querier, ims []*catalog.Image) error {
	if len(ims) == 0 {
		return nil
	}
	byID := make(map[string]*catalog.Image, len(ims))
	args := make([]any, len(ims))
	for i, im := range ims {
		byID[im.ID] = im
		im.Tags = []string{}
		args[i] = im.ID
	}
	in := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(ims)), ", ") + ")"
	err := c.each(ctx, db, `SELECT image_id, tag FROM image_tags WHERE image_id IN `+in+` ORDER BY position`, args, func(id, v string) {
		byID[id].Tags = append(byID[id].Tags, v)
	})
	if err != nil {
		return err
	}
	return c.each(ctx, db, `SELECT image_id, name, value FROM image_properties WHERE image_id IN `+in+` ORDER BY position`, args, func(id, kv string) {
		k, v, _ := strings.Cut(kv, "\x00")
		byID[id].Properties = append(byID[id].Properties, catalog.Property{Key: k, Value: v})
	})
}

// each runs a query returning (image_id, a[, b]) rows; with three columns
// fn gets a and b joined by NUL.
func (c *Catalog) each(ctx context.Context, db querier, query string, args []any, fn func(id, v string)) error {
	rows, err := db.QueryContext(ctx, c.q(query), args...)
	if err != nil {
		return fmt.Errorf("catalog: load: %w", err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		var id, a, b string
		dest := []any{&id, &a}
		if len(cols) == 3 {
			dest = append(dest, &b)
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("catalog: load: %w", err)
		}
		if len(cols) == 3 {
			a += "\x00" + b
		}
		fn(id, a)
	}
	return rows.Err()
}

// UpdateImage implements catalog.Catalog.
func (c *Catalog) UpdateImage(ctx context.Context, id string, mutate func(*catalog.Image) error) (*catalog.Image, error) {
	var out *catalog.Image
	err := c.inTx(ctx, func(tx *sql.Tx) error {
		im, err := c.getImage(ctx, tx, id, c.d.ForUpdate)
		if err != nil {
			return err
		}
		if err := mutate(im); err != nil {
			return err
		}
		im.ID = id
		im.UpdatedAt = time.Now().UTC()
		args := append(imageArgs(im)[1:], id)
		_, err = tx.ExecContext(ctx, c.q(`UPDATE images SET name = ?, disk_format = ?,
			container_format = ?, visibility = ?, size = ?, virtual_size = ?, status = ?,
			checksum = ?, os_hash_algo = ?, os_hash_value = ?, protected = ?, min_ram = ?,
			min_disk = ?, owner = ?, os_hidden = ?, created_at = ?, updated_at = ?,
			block_checksum = ? WHERE id = ?`), args...)
		if err != nil {
			return fmt.Errorf("catalog: update %s: %w", id, err)
		}
		out = im
		return c.writeChildren(ctx, tx, im)
	})
	return out, err
}

// DeleteImage implements catalog.Catalog.
func (c *Catalog) DeleteImage(ctx context.Context, id string) error {
	return c.inTx(ctx, func(tx *sql.Tx) error {
		// Children first: not every engine enforces ON DELETE CASCADE.
		for _, t := range []string{"image_tags", "image_properties", "image_members", "transfers"} {
			if _, err := tx.ExecContext(ctx, c.q(`DELETE FROM `+t+` WHERE image_id = ?`), id); err != nil {
				return fmt.Errorf("catalog: delete %s: %w", id, err)
			}
		}
		res, err := tx.ExecContext(ctx, c.q(`DELETE FROM images WHERE id = ?`), id)
		if err != nil {
			return fmt.Errorf("catalog: delete %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("catalog: delete %s: %w", id, catalog.ErrNotFound)
		}
		return nil
	})
}
