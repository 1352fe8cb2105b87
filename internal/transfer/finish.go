package transfer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"hangar/internal/catalog"
	"hangar/internal/checksum"
	"hangar/internal/storage"
)

// Finalize ends a transfer. For a write transfer it waits for requests in
// flight, flushes, computes the Glance checksums over the written bytes,
// commits the partial object and makes the image active with exactly what a
// whole-file upload of the same bytes would record. A read transfer just
// ends. If finalizing fails before the commit, the transfer is open again
// and the client may retry. It returns the ended transfer and, for a write
// transfer, imageio's block checksum of the image, computed in the same
// pass as the Glance checksums.
func (m *Manager) Finalize(ctx context.Context, id string) (*catalog.Transfer, string, error) {
	s, err := m.session(ctx, id)
	if errors.Is(err, ErrForbidden) { // it exists but ended: a state conflict
		if t, gerr := m.cat.GetTransfer(ctx, id); gerr == nil {
			return nil, "", fmt.Errorf("transfer %s is %s: %w", id, t.Phase, catalog.ErrConflict)
		}
	}
	if err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, "", fmt.Errorf("transfer %s already ended: %w", id, catalog.ErrConflict)
	}
	if _, err := m.setPhase(ctx, id, catalog.PhaseTransferring, catalog.PhaseFinalizing); err != nil {
		return nil, "", err
	}
	if s.partial != nil {
		if err := m.commit(ctx, s); err != nil {
			if _, perr := m.setPhase(context.WithoutCancel(ctx), id, catalog.PhaseFinalizing, catalog.PhaseTransferring); perr != nil {
				m.log.Error("could not reopen transfer after a failed finalize", "transfer", id, "err", perr)
			}
			return nil, "", err
		}
	}
	s.closed = true
	m.drop(id)
	t, err := m.cat.UpdateTransfer(context.WithoutCancel(ctx), id, func(t *catalog.Transfer) error {
		t.Phase, t.Transferred = catalog.PhaseFinished, max(t.Transferred, s.moved.Load())
		return nil
	})
	return t, s.blockChecksum, err
}

func (m *Manager) commit(ctx context.Context, s *session) error {
	if f, ok := s.partial.(storage.Flusher); ok {
		if err := f.Flush(); err != nil {
			return err
		}
	}
	block, err := s.digests.checksum(ctx, s.partial)
	if err != nil {
		return err
	}
	s.blockChecksum = block
	if err := s.partial.Close(); err != nil {
		return err
	}
	if err := m.parts.CommitPartial(ctx, partialName(s.t)); err != nil {
		// Reopen so a retry (or a cancel) finds the partial again.
		if p, oerr := m.parts.OpenPartial(ctx, partialName(s.t), s.t.Size); oerr == nil {
			s.partial = p
		}
		return err
	}
	// Glance's checksums come later, from the backfill: imageio's block
	// checksum is what verifies a transfer, and the image is usable now.
	err = Activate(ctx, m.cat, m.store, s.t.ImageID, checksum.Sums{Size: s.t.Size}, catalog.StatusSaving,
		func(im *catalog.Image) { im.BlockChecksum = &block })
	if err == nil {
		m.backfill.Add(s.t.ImageID)
	}
	return err
}

func (m *Manager) setPhase(ctx context.Context, id, from, to string) (*catalog.Transfer, error) {
	return m.cat.UpdateTransfer(ctx, id, func(t *catalog.Transfer) error {
		if t.Phase != from {
			return fmt.Errorf("transfer %s is %s: %w", id, t.Phase, catalog.ErrConflict)
		}
		t.Phase = to
		return nil
	})
}

// Cancel ends a transfer without keeping its data: it waits for requests
// in flight, discards what a write transfer wrote and puts the image back
// to queued. With remove, the ticket record is deleted too (imageio's
// DELETE /tickets); otherwise it stays, phase cancelled, for clients to
// read. Cancelling an ended transfer changes no data.
func (m *Manager) Cancel(ctx context.Context, id string, remove bool) error {
	t, err := m.cat.GetTransfer(ctx, id)
	if err != nil {
		return err
	}
	m.mu.Lock()
	s := m.sessions[id]
	m.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		s.closed = true
		s.close()
		m.drop(id)
		s.mu.Unlock()
	}
	prev := t.Phase
	if prev == catalog.PhaseTransferring {
		if _, err := m.setPhase(ctx, id, catalog.PhaseTransferring, catalog.PhaseCancelled); err != nil {
			return err
		}
		if t.Can("write") {
			m.discard(ctx, t)
		}
	}
	if remove {
		if err := m.cat.DeleteTransfer(ctx, id); err != nil && !errors.Is(err, catalog.ErrNotFound) {
			return err
		}
	}
	return nil
}

func (m *Manager) discard(ctx context.Context, t *catalog.Transfer) {
	if err := m.parts.RemovePartial(ctx, partialName(t)); err != nil && !errors.Is(err, storage.ErrNotFound) {
		m.log.Warn("could not remove partial data", "transfer", t.ID, "image", t.ImageID, "err", err)
	}
	m.requeue(t.ImageID)
}

// Reap cancels transfers past their expiry (or idle past their inactivity
// timeout on this server) and forgets ended ones an hour after they ended.
func (m *Manager) Reap(ctx context.Context) error {
	ts, err := m.cat.ListTransfers(ctx, "")
	if err != nil {
		return err
	}
	now := time.Now()
	for _, t := range ts {
		switch {
		case t.Phase == catalog.PhaseTransferring && m.stale(t, now):
			m.log.Info("transfer expired", "transfer", t.ID, "image", t.ImageID)
			err = m.Cancel(ctx, t.ID, false)
		case t.Phase != catalog.PhaseTransferring && t.Phase != catalog.PhaseFinalizing && now.Sub(t.UpdatedAt) > time.Hour:
			err = m.cat.DeleteTransfer(ctx, t.ID)
		}
		if err != nil && !errors.Is(err, catalog.ErrNotFound) && !errors.Is(err, catalog.ErrConflict) {
			return err
		}
	}
	return nil
}

func (m *Manager) stale(t *catalog.Transfer, now time.Time) bool {
	m.mu.Lock()
	s := m.sessions[t.ID]
	m.mu.Unlock()
	if s != nil {
		return s.expired(now) != ""
	}
	return now.After(t.ExpiresAt)
}

// Live reports whether an image has a write transfer in progress, which
// start-up recovery must leave alone.
func (m *Manager) Live(ctx context.Context, imageID string) (bool, error) {
	ts, err := m.cat.ListTransfers(ctx, imageID)
	if err != nil {
		return false, err
	}
	for _, t := range ts {
		if t.Can("write") && t.Phase == catalog.PhaseTransferring && time.Now().Before(t.ExpiresAt) {
			return true, nil
		}
	}
	return false, nil
}

// Recover runs at start-up, before serving: a transfer caught mid-finalize
// by a crash either had its bytes committed (then the image is activated
// from them) or not (then it is open again, its partial data intact).
func (m *Manager) Recover(ctx context.Context) error {
	ts, err := m.cat.ListTransfers(ctx, "")
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.Phase != catalog.PhaseFinalizing {
			continue
		}
		if err := m.recoverFinalize(ctx, t); err != nil {
			return fmt.Errorf("recover transfer %s: %w", t.ID, err)
		}
	}
	return nil
}

func (m *Manager) recoverFinalize(ctx context.Context, t *catalog.Transfer) error {
	info, err := m.store.Stat(ctx, t.ImageID)
	if errors.Is(err, storage.ErrNotFound) {
		_, err = m.setPhase(ctx, t.ID, catalog.PhaseFinalizing, catalog.PhaseTransferring)
		return err
	}
	if err != nil {
		return err
	}
	// The checksums are the backfill's, as after any finalize.
	if err := Activate(ctx, m.cat, m.store, t.ImageID, checksum.Sums{Size: info.Size}, catalog.StatusSaving); err != nil {
		return err
	}
	m.backfill.Add(t.ImageID)
	_, err = m.setPhase(ctx, t.ID, catalog.PhaseFinalizing, catalog.PhaseFinished)
	return err
}
