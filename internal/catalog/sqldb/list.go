package sqldb

import (
	"context"
	"fmt"
	"strings"

	"hangar/internal/catalog"
)

// sortExpr gives each sort key a NULL-free expression, so ordering and keyset
// comparisons behave the same on every engine (SQLite sorts NULL first,
// PostgreSQL last).
var sortExpr = map[string]string{
	"name":             "COALESCE(name, '')",
	"status":           "status",
	"container_format": "COALESCE(container_format, '')",
	"disk_format":      "COALESCE(disk_format, '')",
	"size":             "COALESCE(size, -1)",
	"id":               "id",
	"created_at":       "created_at",
	"updated_at":       "updated_at",
}

func sortValue(im *catalog.Image, key string) any {
	s := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	switch key {
	case "name":
		return s(im.Name)
	case "status":
		return im.Status
	case "container_format":
		return s(im.ContainerFormat)
	case "disk_format":
		return s(im.DiskFormat)
	case "size":
		if im.Size == nil {
			return int64(-1)
		}
		return *im.Size
	case "created_at":
		return nanos(im.CreatedAt)
	case "updated_at":
		return nanos(im.UpdatedAt)
	}
	return im.ID
}

type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// ListImages implements catalog.Catalog.
func (c *Catalog) ListImages(ctx context.Context, q catalog.Query) ([]*catalog.Image, error) {
	keys, err := withTieBreaker(q.Sort)
	if err != nil {
		return nil, err
	}
	var w where
	visibility(&w, q.Viewer, q.Filter)
	filters(&w, q.Filter)
	if q.Marker != nil {
		marker(&w, keys, q.Marker)
	}
	query := `SELECT ` + imageColumns + ` FROM images`
	if len(w.conds) > 0 {
		query += ` WHERE ` + strings.Join(w.conds, " AND ")
	}
	var order []string
	for _, k := range keys {
		order = append(order, sortExpr[k.Key]+map[bool]string{false: " ASC", true: " DESC"}[k.Desc])
	}
	query += ` ORDER BY ` + strings.Join(order, ", ")
	if q.Limit > 0 {
		query += ` LIMIT ?`
		w.args = append(w.args, q.Limit)
	}
	rows, err := c.db.QueryContext(ctx, c.q(query), w.args...)
	if err != nil {
		return nil, fmt.Errorf("catalog: list: %w", err)
	}
	defer rows.Close()
	var out []*catalog.Image
	for rows.Next() {
		im, err := scanImage(rows)
		if err != nil {
			return nil, fmt.Errorf("catalog: list: %w", err)
		}
		out = append(out, im)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("catalog: list: %w", err)
	}
	return out, c.loadChildren(ctx, c.db, out)
}

func withTieBreaker(sorts []catalog.Sort) ([]catalog.Sort, error) {
	keys := append([]catalog.Sort(nil), sorts...)
	if len(keys) == 0 {
		keys = []catalog.Sort{{Key: "created_at", Desc: true}}
	}
	for _, k := range keys {
		if _, ok := sortExpr[k.Key]; !ok {
			return nil, fmt.Errorf("catalog: unknown sort key %q", k.Key)
		}
		if k.Key == "id" {
			return keys, nil
		}
	}
	return append(keys, catalog.Sort{Key: "id", Desc: keys[len(keys)-1].Desc}), nil
}

// marker adds the keyset condition "sorts after the marker":
// (k1 > m1) OR (k1 = m1 AND k2 > m2) OR …, with < for descending keys.
func marker(w *where, keys []catalog.Sort, m *catalog.Image) {
	var ors []string
	var args []any
	for i, k := range keys {
		var ands []string
		for _, prev := range keys[:i] {
			ands = append(ands, sortExpr[prev.Key]+" = ?")
			args = append(args, sortValue(m, prev.Key))
		}
		op := " > ?"
		if k.Desc {
			op = " < ?"
		}
		ands = append(ands, sortExpr[k.Key]+op)
		args = append(args, sortValue(m, k.Key))
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	w.add("("+strings.Join(ors, " OR ")+")", args...)
}

func memberOf(v catalog.Viewer, status string) (string, []any) {
	if status == "" {
		status = "accepted"
	}
	if status == "all" {
		return `EXISTS (SELECT 1 FROM image_members m WHERE m.image_id = images.id AND m.member_id = ?)`, []any{v.Project}
	}
	return `EXISTS (SELECT 1 FROM image_members m WHERE m.image_id = images.id AND m.member_id = ? AND m.status = ?)`, []any{v.Project, status}
}

// visibility applies Glance's rules for which images a viewer lists.
func visibility(w *where, v catalog.Viewer, f catalog.Filter) {
	member, margs := memberOf(v, f.MemberStatus)
	switch f.Visibility {
	case catalog.Public, catalog.Community:
		w.add(`visibility = ?`, f.Visibility)
	case catalog.Private:
		if v.Admin {
			w.add(`visibility = 'private'`)
		} else {
			w.add(`visibility = 'private' AND owner = ?`, v.Project)
		}
	case catalog.Shared:
		if v.Admin {
			w.add(`visibility = 'shared'`)
		} else {
			w.add(`visibility = 'shared' AND (owner = ? OR `+member+`)`, append([]any{v.Project}, margs...)...)
		}
	default: // "" or "all"
		if v.Admin {
			return
		}
		cond := `owner = ? OR visibility = 'public' OR (visibility = 'shared' AND ` + member + `)`
		if f.Visibility == "all" {
			cond += ` OR visibility = 'community'`
		}
		w.add("("+cond+")", append([]any{v.Project}, margs...)...)
	}
}

func filters(w *where, f catalog.Filter) {
	eq := map[string]*string{"name": f.Name, "status": f.Status, "owner": f.Owner,
		"disk_format": f.DiskFormat, "container_format": f.ContainerFormat}
	for _, col := range []string{"name", "status", "owner", "disk_format", "container_format"} {
		if v := eq[col]; v != nil {
			w.add(col+` = ?`, *v)
		}
	}
	if f.SizeMin != nil {
		w.add(`size >= ?`, *f.SizeMin)
	}
	if f.SizeMax != nil {
		w.add(`size <= ?`, *f.SizeMax)
	}
	if f.Protected != nil {
		w.add(`protected = ?`, *f.Protected)
	}
	if f.OSHidden != nil {
		w.add(`os_hidden = ?`, *f.OSHidden)
	}
	for _, t := range f.Tags {
		w.add(`EXISTS (SELECT 1 FROM image_tags t WHERE t.image_id = images.id AND t.tag = ?)`, t)
	}
	for _, p := range f.Properties {
		w.add(`EXISTS (SELECT 1 FROM image_properties p WHERE p.image_id = images.id AND p.name = ? AND p.value = ?)`, p.Key, p.Value)
	}
}
