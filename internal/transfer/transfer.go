// Package transfer runs random-access transfers (imageio tickets) over the
// catalog and the store: it admits requests on a ticket (existence, expiry,
// inactivity, allowed op, reader and writer limits), moves bytes at offsets
// of the image's partial object, and finishes a transfer by finalizing it
// (flush, checksums, commit, image active) or cancelling it (data
// discarded, image queued again). Tickets live in the catalog; the open
// files and counters here are a per-server cache any server can rebuild.
package transfer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"hangar/internal/catalog"
	"hangar/internal/storage"
)

// Sentinel errors of the transfer layer.
var (
	// ErrForbidden: no such ticket, expired, finished, cancelled, or the
	// ticket does not grant the operation (imageio answers 403).
	ErrForbidden = errors.New("forbidden")
	// ErrInvalid is a request that cannot be valid (bad size, bad ops).
	ErrInvalid = errors.New("invalid request")
)

// Config holds limits and defaults.
type Config struct {
	MaxReaders, MaxWriters int           // concurrent requests per ticket
	Timeout                time.Duration // default ticket lifetime
	InactivityTimeout      time.Duration // default idle limit
	// Shared: other servers serve the same transfers (a shared catalog and
	// store). A write request then checks the catalog that its transfer
	// is still open, and finalize hashes every block it did not see
	// written, trusting no digest of its own that another server's later
	// write may have made stale: it reads the whole image back.
	Shared bool
}

// Validate fills defaults and rejects nonsense.
func (c *Config) Validate() error {
	if c.MaxReaders == 0 {
		c.MaxReaders = 8
	}
	if c.MaxWriters == 0 {
		c.MaxWriters = 8
	}
	if c.Timeout == 0 {
		c.Timeout = time.Hour
	}
	if c.InactivityTimeout == 0 {
		c.InactivityTimeout = time.Minute
	}
	if c.MaxReaders < 1 || c.MaxWriters < 1 || c.Timeout < 0 || c.InactivityTimeout < 0 {
		return errors.New("transfer: limits must be positive")
	}
	return nil
}

// Manager admits and runs transfers. Safe for concurrent use.
type Manager struct {
	cat   catalog.Catalog
	store storage.Store
	parts storage.PartialStore
	cfg   Config
	log   *slog.Logger
	// backfill computes Glance's checksums after finalize.
	backfill *Backfill

	// Data requests running and when the last one ended, on any ticket:
	// the backfill waits for a quiet data path.
	active  atomic.Int32
	lastUse atomic.Int64

	mu       sync.Mutex
	sessions map[string]*session
}

// busy reports data requests now or within the last quiet period.
func (m *Manager) busy() bool {
	return m.active.Load() > 0 || time.Since(time.Unix(0, m.lastUse.Load())) < quietPeriod
}

// quietPeriod covers the gap between one client's successive requests.
const quietPeriod = 250 * time.Millisecond

// New returns a manager; the store must support random-access writes.
func New(cat catalog.Catalog, store storage.Store, cfg Config, log *slog.Logger) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	parts, ok := store.(storage.PartialStore)
	if !ok {
		return nil, errors.New("transfer: the store cannot write at random offsets")
	}
	m := &Manager{cat: cat, store: store, parts: parts, cfg: cfg, log: log,
		sessions: map[string]*session{}}
	m.backfill = newBackfill(cat, store, log, m.busy)
	return m, nil
}

// Backfill is the manager's checksum backfill; whoever serves runs it.
func (m *Manager) Backfill() *Backfill { return m.backfill }

// Config returns the limits in force.
func (m *Manager) Config() Config { return m.cfg }

// NewTicketID returns an unguessable bearer secret (256 random bits).
func NewTicketID() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// partialName is the partial object a write transfer builds: the image id,
// so that committing it publishes the image's object.
func partialName(t *catalog.Transfer) string { return t.ImageID }

// Create opens a transfer. A write transfer needs a queued image, which
// becomes saving (no other upload can start); a read transfer needs an
// active image and its size. Zero timeouts take the defaults.
func (m *Manager) Create(ctx context.Context, t *catalog.Transfer) error {
	if err := m.prepare(t); err != nil {
		return err
	}
	write := t.Can("write")
	_, err := m.cat.UpdateImage(ctx, t.ImageID, func(im *catalog.Image) error {
		switch {
		case write && im.Status != catalog.StatusQueued:
			return fmt.Errorf("image %s is %s; a write transfer needs a queued image: %w", im.ID, im.Status, catalog.ErrConflict)
		case !write && im.Status != catalog.StatusActive:
			return fmt.Errorf("image %s is %s; a read transfer needs an active image: %w", im.ID, im.Status, catalog.ErrConflict)
		case !write && t.Size == 0 && im.Size != nil:
			t.Size = *im.Size
		case !write && (im.Size == nil || t.Size != *im.Size):
			return fmt.Errorf("read transfer size %d is not the image size: %w", t.Size, ErrInvalid)
		}
		if write {
			im.Status = catalog.StatusSaving
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := m.cat.CreateTransfer(ctx, t); err != nil {
		if write {
			m.requeue(t.ImageID)
		}
		return err
	}
	return nil
}

func (m *Manager) prepare(t *catalog.Transfer) error {
	if len(t.Ops) == 0 {
		return fmt.Errorf("ops must name read or write: %w", ErrInvalid)
	}
	for _, op := range t.Ops {
		if op != "read" && op != "write" {
			return fmt.Errorf("unknown op %q: %w", op, ErrInvalid)
		}
	}
	if t.Size < 0 || (t.Can("write") && t.Size == 0) {
		return fmt.Errorf("size %d: %w", t.Size, ErrInvalid)
	}
	if t.Timeout < 0 || t.InactivityTimeout < 0 {
		return fmt.Errorf("timeouts must not be negative: %w", ErrInvalid)
	}
	if t.ID == "" {
		t.ID = NewTicketID()
	}
	if t.Timeout == 0 {
		t.Timeout = int64(m.cfg.Timeout / time.Second)
	}
	if t.InactivityTimeout == 0 {
		t.InactivityTimeout = int64(m.cfg.InactivityTimeout / time.Second)
	}
	t.ExpiresAt = time.Now().UTC().Add(time.Duration(t.Timeout) * time.Second)
	t.Phase = catalog.PhaseTransferring
	return nil
}

// requeue returns an image held by a write transfer to queued.
func (m *Manager) requeue(imageID string) {
	_, err := m.cat.UpdateImage(context.Background(), imageID, func(im *catalog.Image) error {
		if im.Status != catalog.StatusSaving {
			return catalog.ErrConflict
		}
		im.Status, im.Size = catalog.StatusQueued, nil
		return nil
	})
	if err != nil && !errors.Is(err, catalog.ErrConflict) && !errors.Is(err, catalog.ErrNotFound) {
		m.log.Error("could not requeue image", "image", imageID, "err", err)
	}
}

// Get returns the transfer with this server's live counters folded in.
func (m *Manager) Get(ctx context.Context, id string) (*catalog.Transfer, Stats, error) {
	t, err := m.cat.GetTransfer(ctx, id)
	if err != nil {
		return nil, Stats{}, err
	}
	m.mu.Lock()
	s := m.sessions[id]
	m.mu.Unlock()
	var st Stats
	if s != nil {
		st = s.stats()
		t.Transferred = max(t.Transferred, st.Transferred)
	}
	return t, st, nil
}

// Extend sets a new lifetime from now (imageio's PATCH /tickets/{id}).
func (m *Manager) Extend(ctx context.Context, id string, timeout int64) (*catalog.Transfer, error) {
	if timeout < 0 {
		return nil, fmt.Errorf("timeout %d: %w", timeout, ErrInvalid)
	}
	return m.cat.UpdateTransfer(ctx, id, func(t *catalog.Transfer) error {
		if t.Phase != catalog.PhaseTransferring {
			return fmt.Errorf("transfer is %s: %w", t.Phase, catalog.ErrConflict)
		}
		t.Timeout = timeout
		t.ExpiresAt = time.Now().UTC().Add(time.Duration(timeout) * time.Second)
		return nil
	})
}
