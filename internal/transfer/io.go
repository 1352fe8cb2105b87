package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"hangar/internal/blkhash"
	"hangar/internal/catalog"
	"hangar/internal/storage"
)

// bufPool holds the buffers a write request copies its body through.
var bufPool = sync.Pool{New: func() any { b := storage.AlignedBuffer(1 << 20); return &b }}

// checkRange refuses ranges outside the ticket's image.
func (l *Lease) checkRange(off, n int64) error {
	size := l.s.t.Size
	if off < 0 || n < 0 || off > size || n > size-off {
		return fmt.Errorf("range %d+%d outside 0..%d: %w", off, n, size, storage.ErrInvalidRange)
	}
	return nil
}

// WriteFrom writes exactly n bytes from src at off. A source that ends
// early is an error (io.ErrUnexpectedEOF); what arrived stays written,
// inside the range only.
func (l *Lease) WriteFrom(src io.Reader, off, n int64) (int64, error) {
	if err := l.checkRange(off, n); err != nil {
		return 0, err
	}
	if h := l.s.hasher; h != nil {
		h.begin(off, n)
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	var done int64
	for done < n {
		m, err := io.ReadFull(src, buf[:min(int64(len(buf)), n-done)])
		if m > 0 {
			if _, werr := l.s.partial.WriteAt(buf[:m], off+done); werr != nil {
				return done, werr
			}
			done += int64(m)
			l.s.moved.Add(int64(m))
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return done, err
		}
	}
	l.s.addPending(off, n)
	if h := l.s.hasher; h != nil {
		h.complete(off, n, false)
	}
	return done, nil
}

// Zero makes a range read as zeros, punching holes where it can.
func (l *Lease) Zero(off, n int64) error {
	if err := l.checkRange(off, n); err != nil {
		return err
	}
	if h := l.s.hasher; h != nil {
		h.begin(off, n)
	}
	if err := zero(l.s.partial, off, n); err != nil {
		return err
	}
	l.s.addPending(off, n)
	if h := l.s.hasher; h != nil {
		h.complete(off, n, true)
	}
	return nil
}

func zero(p storage.Partial, off, n int64) error {
	if z, ok := p.(storage.Zeroer); ok {
		return z.Zero(off, n)
	}
	zeros := make([]byte, min(n, 1<<20))
	for done := int64(0); done < n; {
		m := min(int64(len(zeros)), n-done)
		if _, err := p.WriteAt(zeros[:m], off+done); err != nil {
			return err
		}
		done += m
	}
	return nil
}

// Flush makes written data durable and records, in the catalog, the bytes
// moved and the ranges now done, which a resuming client skips.
func (l *Lease) Flush(ctx context.Context) error {
	if l.s.partial == nil {
		return nil // a read transfer has nothing to flush
	}
	done := l.s.takePending() // only writes finished before the fsync
	if f, ok := l.s.partial.(storage.Flusher); ok {
		if err := f.Flush(); err != nil {
			l.s.pmu.Lock()
			l.s.pending = append(l.s.pending, done...)
			l.s.pmu.Unlock()
			return err
		}
	}
	return l.m.recordProgress(ctx, l.s, done)
}

func (m *Manager) recordProgress(ctx context.Context, s *session, done []catalog.Range) error {
	moved := s.moved.Load()
	_, err := m.cat.UpdateTransfer(ctx, s.t.ID, func(t *catalog.Transfer) error {
		t.Transferred = max(t.Transferred, moved)
		t.Done = catalog.AddRanges(t.Done, done...)
		return nil
	})
	return err
}

// OpenRange returns the bytes [off, off+n). For a read transfer the body is
// the committed image file itself (an *os.File positioned at off, so
// net/http sends it by sendfile); for a write transfer a section of the
// partial object.
func (l *Lease) OpenRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	if err := l.checkRange(off, n); err != nil {
		return nil, err
	}
	if l.s.partial != nil {
		return io.NopCloser(io.NewSectionReader(l.s.partial, off, n)), nil
	}
	if fo, ok := l.m.store.(storage.FileOpener); ok {
		f, err := fo.OpenFile(ctx, l.s.t.ImageID)
		if err != nil {
			return nil, err
		}
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	r, err := l.m.store.Open(ctx, l.s.t.ImageID)
	if err != nil {
		return nil, err
	}
	if _, err := r.Seek(off, io.SeekStart); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Extents reports data and holes of the image being transferred; a store
// that cannot tell reports one data extent.
func (l *Lease) Extents(ctx context.Context) ([]storage.Extent, error) {
	size := l.s.t.Size
	var ex storage.Extenter
	if l.s.partial != nil {
		ex, _ = l.s.partial.(storage.Extenter)
	} else {
		r, err := l.m.store.Open(ctx, l.s.t.ImageID)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		ex, _ = r.(storage.Extenter)
	}
	if ex == nil || size == 0 {
		if size == 0 {
			return []storage.Extent{}, nil
		}
		return []storage.Extent{{Offset: 0, Length: size}}, nil
	}
	return ex.Extents(ctx)
}

// Checksum computes imageio's block checksum of the current bytes, blocks
// hashed on every core; holes cost a precomputed digest instead of a read.
func (l *Lease) Checksum(ctx context.Context, blockSize int) (string, error) {
	exts, err := l.Extents(ctx)
	if err != nil {
		return "", err
	}
	var holes []blkhash.Hole
	for _, e := range exts {
		if e.Zero {
			holes = append(holes, blkhash.Hole{Off: e.Offset, Len: e.Length})
		}
	}
	var r io.ReaderAt = l.s.partial
	if l.s.partial == nil {
		rd, err := l.m.store.Open(ctx, l.s.t.ImageID)
		if err != nil {
			return "", err
		}
		defer rd.Close()
		r = rd
	}
	return blkhash.Sum(ctx, r, l.s.t.Size, holes, blockSize, 0)
}
