package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"hangar/internal/catalog"
)

const transferColumns = `id, image_id, ops, size, timeout, inactivity_timeout, expires_at, phase,
	transferred, created_at, updated_at, done_ranges`

func transferArgs(t *catalog.Transfer) []any {
	done, _ := json.Marshal(t.Done)
	if t.Done == nil {
		done = []byte("[]")
	}
	return []any{t.ID, t.ImageID, strings.Join(t.Ops, ","), t.Size, t.Timeout, t.InactivityTimeout,
		nanos(t.ExpiresAt), t.Phase, t.Transferred, nanos(t.CreatedAt), nanos(t.UpdatedAt), string(done)}
}

func scanTransfer(s scanner) (*catalog.Transfer, error) {
	var t catalog.Transfer
	var ops, done string
	var expires, created, updated int64
	err := s.Scan(&t.ID, &t.ImageID, &ops, &t.Size, &t.Timeout, &t.InactivityTimeout, &expires,
		&t.Phase, &t.Transferred, &created, &updated, &done)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(done), &t.Done); err != nil {
		return nil, fmt.Errorf("done ranges: %w", err)
	}
	if len(t.Done) == 0 {
		t.Done = nil
	}
	t.Ops = strings.Split(ops, ",")
	t.ExpiresAt, t.CreatedAt, t.UpdatedAt = fromNanos(expires), fromNanos(created), fromNanos(updated)
	return &t, nil
}

// CreateTransfer implements catalog.Transfers.
func (c *Catalog) CreateTransfer(ctx context.Context, t *catalog.Transfer) error {
	now := time.Now().UTC()
	t.CreatedAt, t.UpdatedAt = now, now
	return c.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := c.getImage(ctx, tx, t.ImageID, c.d.ForUpdate); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, c.q(`INSERT INTO transfers (`+transferColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), transferArgs(t)...)
		return c.wrapUnique(err, "create transfer")
	})
}

// GetTransfer implements catalog.Transfers.
func (c *Catalog) GetTransfer(ctx context.Context, id string) (*catalog.Transfer, error) {
	return c.getTransfer(ctx, c.db, id, "")
}

func (c *Catalog) getTransfer(ctx context.Context, db querier, id, suffix string) (*catalog.Transfer, error) {
	t, err := scanTransfer(db.QueryRowContext(ctx, c.q(`SELECT `+transferColumns+` FROM transfers WHERE id = ? `+suffix), id))
	if err != nil {
		return nil, notFound(err, "transfer")
	}
	return t, nil
}

// UpdateTransfer implements catalog.Transfers.
func (c *Catalog) UpdateTransfer(ctx context.Context, id string, mutate func(*catalog.Transfer) error) (*catalog.Transfer, error) {
	var out *catalog.Transfer
	err := c.inTx(ctx, func(tx *sql.Tx) error {
		t, err := c.getTransfer(ctx, tx, id, c.d.ForUpdate)
		if err != nil {
			return err
		}
		if err := mutate(t); err != nil {
			return err
		}
		t.ID = id
		t.UpdatedAt = time.Now().UTC()
		args := append(transferArgs(t)[1:], id)
		_, err = tx.ExecContext(ctx, c.q(`UPDATE transfers SET image_id = ?, ops = ?, size = ?,
			timeout = ?, inactivity_timeout = ?, expires_at = ?, phase = ?, transferred = ?,
			created_at = ?, updated_at = ?, done_ranges = ? WHERE id = ?`), args...)
		if err != nil {
			return fmt.Errorf("catalog: update transfer: %w", err)
		}
		out = t
		return nil
	})
	return out, err
}

// DeleteTransfer implements catalog.Transfers.
func (c *Catalog) DeleteTransfer(ctx context.Context, id string) error {
	res, err := c.db.ExecContext(ctx, c.q(`DELETE FROM transfers WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("catalog: delete transfer: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("catalog: delete transfer: %w", catalog.ErrNotFound)
	}
	return nil
}

// ListTransfers implements catalog.Transfers.
func (c *Catalog) ListTransfers(ctx context.Context, imageID string) ([]*catalog.Transfer, error) {
	query, args := `SELECT `+transferColumns+` FROM transfers ORDER BY created_at`, []any{}
	if imageID != "" {
		query, args = `SELECT `+transferColumns+` FROM transfers WHERE image_id = ? ORDER BY created_at`, []any{imageID}
	}
	rows, err := c.db.QueryContext(ctx, c.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("catalog: list transfers: %w", err)
	}
	defer rows.Close()
	var out []*catalog.Transfer
	for rows.Next() {
		t, err := scanTransfer(rows)
		if err != nil {
			return nil, fmt.Errorf("catalog: list transfers: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
