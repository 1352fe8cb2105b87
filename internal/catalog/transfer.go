package catalog

import (
	"context"
	"slices"
	"time"
)

// Transfer phases.
const (
	PhaseTransferring = "transferring"
	PhaseFinalizing   = "finalizing"
	PhaseFinished     = "finished"
	PhaseCancelled    = "cancelled"
)

// Transfer is a ticket: a bearer secret (the id) granting read or write
// access to one image's bytes until it expires. Transfers live in the
// catalog so they survive restarts and any server can serve them.
type Transfer struct {
	ID                string
	ImageID           string
	Ops               []string // "read", "write" (write implies read)
	Size              int64
	Timeout           int64 // seconds the ticket lives, from creation or extension
	InactivityTimeout int64 // seconds without requests before it expires
	ExpiresAt         time.Time
	Phase             string
	Transferred       int64   // bytes moved, as last recorded
	Done              []Range // ranges written (or zeroed) and flushed: what a resumed client need not send
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// Can reports whether the transfer grants op.
func (t *Transfer) Can(op string) bool {
	return slices.Contains(t.Ops, op) || (op == "read" && slices.Contains(t.Ops, "write"))
}

// Transfers is the part of a catalog that keeps transfers.
type Transfers interface {
	// CreateTransfer inserts t; ErrExists if the id is taken, ErrNotFound
	// if its image does not exist.
	CreateTransfer(ctx context.Context, t *Transfer) error
	GetTransfer(ctx context.Context, id string) (*Transfer, error)
	// UpdateTransfer is a read-modify-write in one transaction, like
	// UpdateImage.
	UpdateTransfer(ctx context.Context, id string, mutate func(*Transfer) error) (*Transfer, error)
	DeleteTransfer(ctx context.Context, id string) error
	// ListTransfers returns the transfers of one image, or all with "".
	ListTransfers(ctx context.Context, imageID string) ([]*Transfer, error)
}
