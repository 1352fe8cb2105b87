package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"hangar/internal/catalog"
)

const memberColumns = `image_id, member_id, status, created_at, updated_at`

func scanMember(s scanner) (*catalog.Member, error) {
	var m catalog.Member
	var created, updated int64
	if err := s.Scan(&m.ImageID, &m.MemberID, &m.Status, &created, &updated); err != nil {
		return nil, err
	}
	m.CreatedAt, m.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &m, nil
}

// AddMember implements catalog.Catalog.
func (c *Catalog) AddMember(ctx context.Context, m *catalog.Member) error {
	now := time.Now().UTC()
	m.CreatedAt, m.UpdatedAt = now, now
	return c.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := c.getImage(ctx, tx, m.ImageID, c.d.ForUpdate); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, c.q(`INSERT INTO image_members (`+memberColumns+`) VALUES (?, ?, ?, ?, ?)`),
			m.ImageID, m.MemberID, m.Status, nanos(now), nanos(now))
		return c.wrapUnique(err, "add member "+m.MemberID)
	})
}

// GetMember implements catalog.Catalog.
func (c *Catalog) GetMember(ctx context.Context, imageID, memberID string) (*catalog.Member, error) {
	row := c.db.QueryRowContext(ctx, c.q(`SELECT `+memberColumns+` FROM image_members WHERE image_id = ? AND member_id = ?`), imageID, memberID)
	m, err := scanMember(row)
	if err != nil {
		return nil, notFound(err, "member "+memberID)
	}
	return m, nil
}

// ListMembers implements catalog.Catalog.
func (c *Catalog) ListMembers(ctx context.Context, imageID string) ([]*catalog.Member, error) {
	rows, err := c.db.QueryContext(ctx, c.q(`SELECT `+memberColumns+` FROM image_members WHERE image_id = ? ORDER BY created_at, member_id`), imageID)
	if err != nil {
		return nil, fmt.Errorf("catalog: members: %w", err)
	}
	defer rows.Close()
	out := []*catalog.Member{}
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, fmt.Errorf("catalog: members: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// UpdateMemberStatus implements catalog.Catalog.
func (c *Catalog) UpdateMemberStatus(ctx context.Context, imageID, memberID, status string) (*catalog.Member, error) {
	res, err := c.db.ExecContext(ctx, c.q(`UPDATE image_members SET status = ?, updated_at = ? WHERE image_id = ? AND member_id = ?`),
		status, nanos(time.Now()), imageID, memberID)
	if err != nil {
		return nil, fmt.Errorf("catalog: update member: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, fmt.Errorf("catalog: member %s: %w", memberID, catalog.ErrNotFound)
	}
	return c.GetMember(ctx, imageID, memberID)
}

// DeleteMember implements catalog.Catalog.
func (c *Catalog) DeleteMember(ctx context.Context, imageID, memberID string) error {
	res, err := c.db.ExecContext(ctx, c.q(`DELETE FROM image_members WHERE image_id = ? AND member_id = ?`), imageID, memberID)
	if err != nil {
		return fmt.Errorf("catalog: delete member: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("catalog: member %s: %w", memberID, catalog.ErrNotFound)
	}
	return nil
}
