// Package catalog is the record of images: their metadata, tags, custom
// properties and members. Implementations (SQLite embedded, PostgreSQL for
// several servers) share one conformance suite in catalogtest; races between
// servers are decided inside the database by UpdateImage's transaction.
package catalog

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors, wrapped with %w by implementations.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
	// ErrConflict is returned by an UpdateImage mutation (or the database)
	// when a state transition is not allowed from the current state.
	ErrConflict = errors.New("conflict")
)

// Image statuses, as Glance names them.
const (
	StatusQueued      = "queued"
	StatusSaving      = "saving"
	StatusUploading   = "uploading"
	StatusImporting   = "importing"
	StatusActive      = "active"
	StatusDeactivated = "deactivated"
	StatusKilled      = "killed"
)

// Visibilities.
const (
	Public    = "public"
	Community = "community"
	Shared    = "shared"
	Private   = "private"
)

// Property is a custom key/value; order is kept because Glance lists custom
// properties in the order they were set.
type Property struct {
	Key, Value string
}

// Image is one catalog record. Pointers are Glance's nullable fields.
type Image struct {
	ID              string
	Name            *string
	DiskFormat      *string
	ContainerFormat *string
	Visibility      string
	Size            *int64
	VirtualSize     *int64
	Status          string
	Checksum        *string
	OSHashAlgo      *string
	OSHashValue     *string
	// BlockChecksum is imageio's block checksum of the bytes (blkhash,
	// default block size), kept so a read transfer need not compute it.
	// Not a Glance field: the Image API does not show it.
	BlockChecksum *string
	Protected     bool
	MinRAM        int64
	MinDisk       int64
	Owner         *string
	OSHidden      bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
	Tags          []string
	Properties    []Property
}

// Property returns the value of a custom property.
func (im *Image) Property(key string) (string, bool) {
	for _, p := range im.Properties {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// SetProperty adds or replaces a custom property, keeping its position.
func (im *Image) SetProperty(key, value string) {
	for i, p := range im.Properties {
		if p.Key == key {
			im.Properties[i].Value = value
			return
		}
	}
	im.Properties = append(im.Properties, Property{key, value})
}

// RemoveProperty deletes a custom property; it reports whether it existed.
func (im *Image) RemoveProperty(key string) bool {
	for i, p := range im.Properties {
		if p.Key == key {
			im.Properties = append(im.Properties[:i], im.Properties[i+1:]...)
			return true
		}
	}
	return false
}

// HasTag reports whether the image carries tag.
func (im *Image) HasTag(tag string) bool {
	for _, t := range im.Tags {
		if t == tag {
			return true
		}
	}
	return false
}

// Member is a project an image is shared with.
type Member struct {
	ImageID   string
	MemberID  string
	Status    string // pending, accepted, rejected
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Catalog stores images and members. All methods are safe for concurrent use.
type Catalog interface {
	// CreateImage inserts im; ErrExists if the id is taken.
	CreateImage(ctx context.Context, im *Image) error
	// GetImage returns ErrNotFound for an unknown id.
	GetImage(ctx context.Context, id string) (*Image, error)
	// ListImages returns the images q selects, in q's order, at most q.Limit.
	ListImages(ctx context.Context, q Query) ([]*Image, error)
	// UpdateImage reads the image, applies mutate and stores the result in
	// one transaction, so concurrent updates serialize and exactly one of
	// two conflicting transitions wins. An error from mutate aborts the
	// update and is returned as is. UpdatedAt is set by the catalog.
	UpdateImage(ctx context.Context, id string, mutate func(*Image) error) (*Image, error)
	// DeleteImage removes the image with its tags and members.
	DeleteImage(ctx context.Context, id string) error

	// AddMember inserts m; ErrExists if the project is a member already.
	AddMember(ctx context.Context, m *Member) error
	GetMember(ctx context.Context, imageID, memberID string) (*Member, error)
	ListMembers(ctx context.Context, imageID string) ([]*Member, error)
	// UpdateMemberStatus sets the status; ErrNotFound for no such member.
	UpdateMemberStatus(ctx context.Context, imageID, memberID, status string) (*Member, error)
	DeleteMember(ctx context.Context, imageID, memberID string) error

	Transfers
	Close() error
}
