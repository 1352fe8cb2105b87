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
	tk := l.s.digests.begin(off, n)
	feed := l.s.digests.feeder()
	done, err := l.copyIn(src, off, n, feed)
	if err != nil {
		l.s.digests.end(tk, nil)
		return done, err
	}
	l.s.addPending(off, n)
	l.s.digests.end(tk, feed.sums)
	return done, nil
}

// copyIn moves the body into the partial object through a pooled aligned
// buffer, hashing whole blocks on the way.
func (l *Lease) copyIn(src io.Reader, off, n int64, feed *blockFeeder) (int64, error) {
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
			feed.write(off+done, buf[:m])
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
	return done, nil
}

// Zero makes a range read as zeros, punching holes where it can.
func (l *Lease) Zero(off, n int64) error {
	if err := l.checkRange(off, n); err != nil {
		return err
	}
	// Zeroed blocks get no digest: finalize finds the holes it made.
	tk := l.s.digests.begin(off, n)
	defer l.s.digests.end(tk, nil)
	if err := zero(l.s.partial, off, n); err != nil {
		return err
	}
	l.s.addPending(off, n)
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
// An active image's checksum at the default block size is computed once
// and kept in its record (active images never change).
func (l *Lease) Checksum(ctx context.Context, blockSize int) (string, error) {
	if l.s.partial != nil {
		return blkhash.Sum(ctx, l.s.partial, l.s.t.Size, holesOf(l.Extents(ctx)), blockSize, 0)
	}
	if blockSize == blkhash.BlockSize {
		if im, err := l.m.cat.GetImage(ctx, l.s.t.ImageID); err == nil && im.BlockChecksum != nil {
			return *im.BlockChecksum, nil
		}
	}
	rd, err := l.m.store.Open(ctx, l.s.t.ImageID)
	if err != nil {
		return "", err
	}
	defer rd.Close()
	sum, err := blkhash.Sum(ctx, rd, l.s.t.Size, holesOf(l.Extents(ctx)), blockSize, 0)
	if err == nil && blockSize == blkhash.BlockSize {
		l.m.keepBlockChecksum(ctx, l.s.t.ImageID, sum)
	}
	return sum, err
}

func holesOf(exts []storage.Extent, err error) []blkhash.Hole {
	var holes []blkhash.Hole
	for _, e := range exts {
		if e.Zero && err == nil {
			holes = append(holes, blkhash.Hole{Off: e.Offset, Len: e.Length})
		}
	}
	return holes
}

func (m *Manager) keepBlockChecksum(ctx context.Context, imageID, sum string) {
	_, err := m.cat.UpdateImage(ctx, imageID, func(im *catalog.Image) error {
		if im.BlockChecksum == nil && (im.Status == catalog.StatusActive || im.Status == catalog.StatusDeactivated) {
			im.BlockChecksum = &sum
		}
		return nil
	})
	if err != nil {
		m.log.Warn("could not record the block checksum", "image", imageID, "err", err)
	}
}
