package glance

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"hangar/internal/auth"
	"hangar/internal/catalog"
)

// Glance's api_limit_max and limit_param_default.
const (
	maxPageSize     = 1000
	defaultPageSize = 25
)

// listParams are the query keys with a meaning of their own; any other key
// filters on a custom property, as in Glance.
var listParams = []string{"limit", "marker", "sort", "sort_key", "sort_dir", "name", "status",
	"visibility", "owner", "tag", "disk_format", "container_format", "size_min", "size_max",
	"protected", "os_hidden", "member_status"}

func (a *API) listImages(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	params, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return errorf(http.StatusBadRequest, "Malformed query string.")
	}
	q, err := parseListQuery(params)
	if err != nil {
		return err
	}
	q.Viewer = catalog.Viewer{Project: id.Project, Admin: id.Admin}
	if m := params.Get("marker"); m != "" {
		marker, err := a.loadImage(r.Context(), id, m)
		if err != nil {
			return errorf(http.StatusBadRequest, "No image found with ID %s", m)
		}
		q.Marker = marker
	}
	images, err := a.cat.ListImages(r.Context(), q)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, listBody(r.URL.RawQuery, images, q.Limit))
}

func listBody(rawQuery string, images []*catalog.Image, limit int) json.RawMessage {
	records := make([]json.RawMessage, len(images))
	for i, im := range images {
		records[i] = imageRecord(im)
	}
	first := "/v2/images"
	if q := queryWithout(rawQuery, "marker"); q != "" {
		first += "?" + q
	}
	var o orderedJSON
	o.add("images", records)
	o.add("first", first)
	o.add("schema", "/v2/schemas/images")
	if len(images) == limit && limit > 0 {
		sep := "?"
		if strings.Contains(first, "?") {
			sep = "&"
		}
		o.add("next", first+sep+"marker="+url.QueryEscape(images[len(images)-1].ID))
	}
	return o.bytes()
}

// queryWithout re-encodes a query string in its original order (Glance's
// links keep it), leaving out one key.
func queryWithout(raw, drop string) string {
	var out []string
	for _, part := range strings.Split(raw, "&") {
		k, v, _ := strings.Cut(part, "=")
		key, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(v)
		if part == "" || err1 != nil || err2 != nil || key == drop {
			continue
		}
		out = append(out, url.QueryEscape(key)+"="+url.QueryEscape(val))
	}
	return strings.Join(out, "&")
}

func parseListQuery(p url.Values) (catalog.Query, error) {
	q := catalog.Query{Limit: defaultPageSize}
	if s := p.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return q, errorf(http.StatusBadRequest, "limit param must be an integer")
		}
		if n < 0 {
			return q, errorf(http.StatusBadRequest, "limit param must be positive")
		}
		q.Limit = min(n, maxPageSize)
	}
	sorts, err := parseSort(p)
	if err != nil {
		return q, err
	}
	q.Sort = sorts
	q.Filter, err = parseFilter(p)
	return q, err
}

func parseSort(p url.Values) ([]catalog.Sort, error) {
	if p.Has("sort") {
		if p.Has("sort_key") || p.Has("sort_dir") {
			return nil, errorf(http.StatusBadRequest, "The sort param cannot be combined with sort_key or sort_dir.")
		}
		var out []catalog.Sort
		for _, item := range strings.Split(p.Get("sort"), ",") {
			key, dir, _ := strings.Cut(strings.TrimSpace(item), ":")
			s, err := sortOf(key, dir)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	keys, dirs := p["sort_key"], p["sort_dir"]
	if len(keys) == 0 {
		keys = []string{"created_at"}
	}
	if len(dirs) > 1 && len(dirs) != len(keys) {
		return nil, errorf(http.StatusBadRequest, "Number of sort dirs does not match the number of sort keys")
	}
	var out []catalog.Sort
	for i, key := range keys {
		dir := "desc"
		if len(dirs) == 1 {
			dir = dirs[0]
		} else if len(dirs) > 1 {
			dir = dirs[i]
		}
		s, err := sortOf(key, dir)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func sortOf(key, dir string) (catalog.Sort, error) {
	if !slices.Contains(catalog.SortKeys, key) {
		return catalog.Sort{}, errorf(http.StatusBadRequest, "Invalid sort key: %s. It should be one of the following: %s.", key, strings.Join(catalog.SortKeys, ", "))
	}
	switch dir {
	case "", "desc":
		return catalog.Sort{Key: key, Desc: true}, nil
	case "asc":
		return catalog.Sort{Key: key}, nil
	}
	return catalog.Sort{}, errorf(http.StatusBadRequest, "Invalid sort direction: %s", dir)
}
