package glance

import (
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"

	"hangar/internal/catalog"
)

func parseFilter(p url.Values) (catalog.Filter, error) {
	var f catalog.Filter
	str := func(key string) *string {
		if p.Has(key) {
			v := p.Get(key)
			return &v
		}
		return nil
	}
	f.Name, f.Status, f.Owner = str("name"), str("status"), str("owner")
	f.DiskFormat, f.ContainerFormat = str("disk_format"), str("container_format")
	f.Tags = p["tag"]
	var err error
	if f.SizeMin, err = intParam(p, "size_min"); err != nil {
		return f, err
	}
	if f.SizeMax, err = intParam(p, "size_max"); err != nil {
		return f, err
	}
	if f.Protected, err = boolParam(p, "protected"); err != nil {
		return f, err
	}
	if f.OSHidden, err = boolParam(p, "os_hidden"); err != nil {
		return f, err
	}
	if f.OSHidden == nil { // Glance hides os_hidden images unless asked
		hidden := false
		f.OSHidden = &hidden
	}
	f.Visibility = p.Get("visibility")
	if !slices.Contains([]string{"", "all", catalog.Public, catalog.Private, catalog.Shared, catalog.Community}, f.Visibility) {
		return f, errorf(http.StatusBadRequest, "Invalid visibility value: %s", f.Visibility)
	}
	f.MemberStatus = p.Get("member_status")
	if !slices.Contains([]string{"", "all", "pending", "accepted", "rejected"}, f.MemberStatus) {
		return f, errorf(http.StatusBadRequest, "Invalid status value: %s", f.MemberStatus)
	}
	f.Properties = propertyFilters(p)
	return f, nil
}

func propertyFilters(p url.Values) []catalog.Property {
	var keys []string
	for k := range p {
		if !slices.Contains(listParams, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []catalog.Property
	for _, k := range keys {
		out = append(out, catalog.Property{Key: k, Value: p.Get(k)})
	}
	return out
}

func intParam(p url.Values, key string) (*int64, error) {
	if !p.Has(key) {
		return nil, nil
	}
	n, err := strconv.ParseInt(p.Get(key), 10, 64)
	if err != nil || n < 0 {
		return nil, errorf(http.StatusBadRequest, "Invalid value for %s: %s. It must be a non-negative integer.", key, p.Get(key))
	}
	return &n, nil
}

func boolParam(p url.Values, key string) (*bool, error) {
	if !p.Has(key) {
		return nil, nil
	}
	b, err := strconv.ParseBool(p.Get(key))
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "Invalid value for %s: %s. It must be true or false.", key, p.Get(key))
	}
	return &b, nil
}
