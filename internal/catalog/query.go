package catalog

// Viewer is who is asking: list results depend on it (Glance's visibility
// rules). Admin sees everything.
type Viewer struct {
	Project string // empty when unauthenticated
	Admin   bool
}

// SortKeys Glance accepts in sort_key / sort=.
var SortKeys = []string{"name", "status", "container_format", "disk_format", "size", "id", "created_at", "updated_at"}

// Sort is one ordering key.
type Sort struct {
	Key  string
	Desc bool
}

// Filter selects images. Nil fields do not filter.
type Filter struct {
	Name, Status, Owner         *string
	DiskFormat, ContainerFormat *string
	SizeMin, SizeMax            *int64
	Protected, OSHidden         *bool
	Tags                        []string // every tag must be present
	Properties                  []Property
	// Visibility is "" (Glance's default set), "all", or one visibility.
	Visibility string
	// MemberStatus applies to images shared with the viewer: "accepted"
	// (default), "pending", "rejected" or "all".
	MemberStatus string
}

// Query is a list request: filter, order, page.
type Query struct {
	Viewer Viewer
	Filter Filter
	// Sort keys; the implementation appends id as the final tie-breaker
	// with the direction of the last key, as Glance does.
	Sort   []Sort
	Marker *Image // start after this image (keyset pagination)
	Limit  int
}
