package glance

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"hangar/internal/auth"
)

func names(t *testing.T, r resp) []string {
	var out []string
	for _, im := range r.json(t)["images"].([]any) {
		out = append(out, fmt.Sprint(im.(map[string]any)["name"]))
	}
	return out
}

func TestListPaginationLinks(t *testing.T) {
	e := newEnv(t, auth.None{})
	for i := 1; i <= 5; i++ {
		e.create(map[string]any{"name": fmt.Sprintf("list-%d", i), "disk_format": "raw"})
	}
	var seen []string
	next := "/v2/images?limit=2"
	for pages := 0; next != "" && pages < 10; pages++ {
		r := e.do("GET", next, nil)
		body := r.json(t)
		if body["first"] != "/v2/images?limit=2" || body["schema"] != "/v2/schemas/images" {
			t.Fatalf("links: %v", body)
		}
		seen = append(seen, names(t, r)...)
		next, _ = body["next"].(string)
	}
	want := []string{"list-5", "list-4", "list-3", "list-2", "list-1"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("paged %v, want newest first %v", seen, want)
	}
}

func TestListFiltersAndSorts(t *testing.T) {
	e := newEnv(t, auth.None{})
	a := e.create(map[string]any{"name": "alpha", "disk_format": "raw", "tags": []string{"x"}, "os_distro": "fedora"})
	e.upload(a, []byte("12345"))
	e.create(map[string]any{"name": "beta", "disk_format": "qcow2", "tags": []string{"x", "y"}, "protected": true})
	e.create(map[string]any{"name": "gamma", "os_hidden": true})
	cases := []struct {
		query string
		want  []string
	}{
		{"sort=name:asc", []string{"alpha", "beta"}},
		{"sort_key=name&sort_dir=desc", []string{"beta", "alpha"}},
		{"sort=status:asc,name:desc", []string{"alpha", "beta"}},
		{"name=beta", []string{"beta"}},
		{"status=active", []string{"alpha"}},
		{"disk_format=qcow2", []string{"beta"}},
		{"size_min=1&size_max=5", []string{"alpha"}},
		{"tag=x&tag=y", []string{"beta"}},
		{"protected=true", []string{"beta"}},
		{"os_hidden=true", []string{"gamma"}},
		{"os_distro=fedora", []string{"alpha"}},
		{"name=" + url.QueryEscape("no such"), nil},
	}
	for _, c := range cases {
		q := c.query
		if !strings.Contains(q, "sort") {
			q += "&sort=name:asc"
		}
		r := e.do("GET", "/v2/images?"+q, nil)
		if r.status != 200 || fmt.Sprint(names(t, r)) != fmt.Sprint(c.want) {
			t.Errorf("?%s: %d %v, want %v", c.query, r.status, names(t, r), c.want)
		}
	}
	// first keeps the query's order and encoding, as Glance's links do.
	r := e.do("GET", "/v2/images?size_min=1&disk_format=raw&sort=name:asc", nil)
	if first := r.json(t)["first"]; first != "/v2/images?size_min=1&disk_format=raw&sort=name%3Aasc" {
		t.Errorf("first = %v", first)
	}
}
