package transfer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"hangar/internal/catalog"
	"hangar/internal/storage"
)

// session is this server's open state of one transfer. Requests hold mu
// for reading while they run; finalize and cancel take it for writing, so
// they wait for requests in flight and no request starts after them.
type session struct {
	t       *catalog.Transfer
	mu      sync.RWMutex
	closed  bool
	partial storage.Partial // write transfers only
	// blockChecksum is set by a successful finalize.
	blockChecksum string
	// digests are the block digests writes took on the way (write
	// transfers only).
	digests *blockDigests

	// pending are ranges written since the last flush; a flush makes them
	// durable and records them in the catalog as done.
	pmu     sync.Mutex
	pending []catalog.Range

	readers, writers chan struct{}
	lastUse          atomic.Int64 // unix nanoseconds
	moved            atomic.Int64
	active           atomic.Int32
}

// Stats are a transfer's live counters on this server.
type Stats struct {
	Transferred int64
	Active      int // requests running now
	IdleTime    time.Duration
}

func (s *session) stats() Stats {
	return Stats{Transferred: s.moved.Load(), Active: int(s.active.Load()),
		IdleTime: time.Since(time.Unix(0, s.lastUse.Load()))}
}

// session returns the open session, opening it from the catalog.
func (m *Manager) session(ctx context.Context, id string) (*session, error) {
	m.mu.Lock()
	s := m.sessions[id]
	m.mu.Unlock()
	if s != nil {
		return s, nil
	}
	t, err := m.openTransfer(ctx, id)
	if err != nil {
		return nil, err
	}
	s = &session{t: t, readers: make(chan struct{}, m.cfg.MaxReaders), writers: make(chan struct{}, m.cfg.MaxWriters)}
	s.lastUse.Store(time.Now().UnixNano())
	s.moved.Store(t.Transferred)
	if t.Can("write") {
		// Reopening keeps what earlier servers (or this one before a
		// crash) wrote: flushed data survives restarts.
		if s.partial, err = m.parts.OpenPartial(ctx, partialName(t), t.Size); err != nil {
			return nil, err
		}
		s.digests = newBlockDigests(t.Size, !m.cfg.Shared)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if other := m.sessions[id]; other != nil { // lost a race: use the winner's
		s.close()
		return other, nil
	}
	m.sessions[id] = s
	return s, nil
}

func (m *Manager) drop(id string) {
	m.mu.Lock()
	delete(m.sessions, id)
	m.mu.Unlock()
}

// expired reports why a ticket can no longer be used, or "".
func (s *session) expired(now time.Time) string {
	if now.After(s.t.ExpiresAt) {
		return "expired"
	}
	idle := now.Sub(time.Unix(0, s.lastUse.Load()))
	if s.t.InactivityTimeout > 0 && s.active.Load() == 0 && idle > time.Duration(s.t.InactivityTimeout)*time.Second {
		return "inactive for " + idle.Truncate(time.Second).String()
	}
	return ""
}

// openTransfer reads a transfer that must still be transferring; imageio's
// wording for the ones that are not.
func (m *Manager) openTransfer(ctx context.Context, id string) (*catalog.Transfer, error) {
	t, err := m.cat.GetTransfer(ctx, id)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, fmt.Errorf("No such ticket %s: %w", id, ErrForbidden)
	}
	if err != nil {
		return nil, err
	}
	if t.Phase != catalog.PhaseTransferring {
		return nil, fmt.Errorf("Ticket %s is %s: %w", id, t.Phase, ErrForbidden)
	}
	return t, nil
}

// stillOpen checks the catalog: another server may have finalized or
// cancelled the transfer, and a write after that would change the
// committed image (a commit links the partial file). The local session is
// dropped then.
func (m *Manager) stillOpen(ctx context.Context, id string) error {
	_, err := m.openTransfer(ctx, id)
	if errors.Is(err, ErrForbidden) {
		m.mu.Lock()
		s := m.sessions[id]
		delete(m.sessions, id)
		m.mu.Unlock()
		if s != nil {
			s.mu.Lock()
			s.closed = true
			s.close()
			s.mu.Unlock()
		}
	}
	return err
}

// Lease is one admitted request on a ticket; Release ends it.
type Lease struct {
	m   *Manager
	s   *session
	sem chan struct{}
}

// Acquire admits one request doing op ("read" or "write") on ticket id,
// waiting (within ctx) for a reader or writer slot.
func (m *Manager) Acquire(ctx context.Context, id, op string) (*Lease, error) {
	if m.cfg.Shared && op == "write" {
		if err := m.stillOpen(ctx, id); err != nil {
			return nil, err
		}
	}
	s, err := m.session(ctx, id)
	if err != nil {
		return nil, err
	}
	if !s.t.Can(op) {
		return nil, fmt.Errorf("Transfer=(ticket/%s) forbids %s: %w", id, op, ErrForbidden)
	}
	if why := s.expired(time.Now()); why != "" {
		return nil, fmt.Errorf("Ticket %s %s: %w", id, why, ErrForbidden)
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, fmt.Errorf("No such ticket %s: %w", id, ErrForbidden)
	}
	sem := s.readers
	if op == "write" {
		sem = s.writers
	}
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		s.mu.RUnlock()
		return nil, ctx.Err()
	}
	s.active.Add(1)
	m.active.Add(1)
	s.lastUse.Store(time.Now().UnixNano())
	return &Lease{m: m, s: s, sem: sem}, nil
}

// Release ends the request.
func (l *Lease) Release() {
	now := time.Now().UnixNano()
	l.s.lastUse.Store(now)
	l.m.lastUse.Store(now)
	l.s.active.Add(-1)
	l.m.active.Add(-1)
	<-l.sem
	l.s.mu.RUnlock()
}

// Transfer is the ticket this lease was admitted on.
func (l *Lease) Transfer() *catalog.Transfer { return l.s.t }

func (s *session) addPending(off, n int64) {
	s.pmu.Lock()
	s.pending = append(s.pending, catalog.Range{Off: off, Len: n})
	s.pmu.Unlock()
}

func (s *session) takePending() []catalog.Range {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	p := s.pending
	s.pending = nil
	return p
}

// close releases the partial's file.
func (s *session) close() {
	if s.partial != nil {
		s.partial.Close()
	}
}
