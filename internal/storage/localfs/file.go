package localfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"hangar/internal/sparse"
	"hangar/internal/storage"
)

// reader is a committed object opened for reading.
type reader struct {
	*os.File
	size int64
}

func (r *reader) Size() int64 { return r.size }

// Extents implements storage.Extenter.
func (r *reader) Extents(_ context.Context) ([]storage.Extent, error) {
	return extents(r.File, r.size)
}

func extents(f *os.File, size int64) ([]storage.Extent, error) {
	ext, err := sparse.Extents(f, size)
	if err != nil {
		return nil, err
	}
	out := make([]storage.Extent, len(ext))
	for i, e := range ext {
		out[i] = storage.Extent{Offset: e.Offset, Length: e.Length, Zero: e.Hole}
	}
	return out, nil
}

// writebackChunk is how much a sequential writer lets accumulate before it
// asks the kernel to start writing it out.
const writebackChunk = 32 << 20

// writer is a sequential Create in progress.
type writer struct {
	f                *os.File
	name, final, dir string
	done             bool
	written, kicked  int64
}

// Write appends p through the page cache: a whole-image upload is about to
// be downloaded (boot storms follow uploads), so its pages are kept hot;
// random-access transfers write around the cache instead (direct.go).
// Every writebackChunk bytes it starts writeback of what
// came before (sync_file_range, asynchronous), so the disk works while the
// network does and the fsync in Close waits for the tail only.
func (w *writer) Write(p []byte) (int, error) {
	n, err := w.f.WriteAt(p, w.written)
	w.written += int64(n)
	if w.written-w.kicked >= writebackChunk {
		// Advisory: on failure Close's fsync still makes the data durable.
		_ = unix.SyncFileRange(int(w.f.Fd()), w.kicked, w.written-w.kicked, unix.SYNC_FILE_RANGE_WRITE)
		w.kicked = w.written
	}
	return n, err
}

// Close commits: fsync the data, publish by link, fsync the directory.
func (w *writer) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	tmp := w.f.Name()
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = publish(tmp, w.final, w.dir)
	}
	if err != nil {
		os.Remove(tmp)
		return translate("commit", w.name, err)
	}
	return nil
}

// Abort discards the temp file.
func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.f.Close()
	if err := os.Remove(w.f.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return translate("abort", w.name, err)
	}
	return nil
}

// partial is a random-access object in progress.
type partial struct {
	f      *os.File
	direct *os.File // the same file opened O_DIRECT, or nil
	size   int64
}

func (p *partial) Size() int64 { return p.size }
func (p *partial) Close() error {
	if p.direct != nil {
		p.direct.Close()
	}
	return p.f.Close()
}
func (p *partial) Flush() error { return p.f.Sync() }

func (p *partial) check(off, n int64) error {
	if off < 0 || n < 0 || off > p.size || n > p.size-off {
		return fmt.Errorf("localfs: range %d+%d outside 0..%d: %w", off, n, p.size, storage.ErrInvalidRange)
	}
	return nil
}

func (p *partial) WriteAt(b []byte, off int64) (int, error) {
	if err := p.check(off, int64(len(b))); err != nil {
		return 0, err
	}
	n := directPrefix(p.direct, b, off)
	if n > 0 {
		if m, err := p.direct.WriteAt(b[:n], off); err != nil {
			return m, err
		}
	}
	m, err := p.f.WriteAt(b[n:], off+int64(n))
	return n + m, err
}

func (p *partial) ReadAt(b []byte, off int64) (int, error) {
	// Direct only when the whole read is aligned and inside the file: a
	// direct read past the end is short in ways callers do not expect.
	if n := directPrefix(p.direct, b, off); n == len(b) && off+int64(n) <= p.size {
		return p.direct.ReadAt(b, off)
	}
	return p.f.ReadAt(b, off)
}

// Zero implements storage.Zeroer by punching a hole.
func (p *partial) Zero(off, n int64) error {
	if err := p.check(off, n); err != nil {
		return err
	}
	return sparse.PunchHole(p.f, off, n)
}

// Extents implements storage.Extenter.
func (p *partial) Extents(_ context.Context) ([]storage.Extent, error) {
	return extents(p.f, p.size)
}

func (s *Store) partialPath(name string) (string, error) {
	if !storage.ValidName(name) {
		return "", fmt.Errorf("localfs: %q: %w", name, storage.ErrInvalidName)
	}
	return filepath.Join(s.partial, name), nil
}

// OpenPartial implements storage.PartialStore.
func (s *Store) OpenPartial(_ context.Context, name string, size int64) (storage.Partial, error) {
	p, err := s.partialPath(name)
	if err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, fmt.Errorf("localfs: partial %q size %d: %w", name, size, storage.ErrInvalidRange)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, translate("open partial", name, err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() != size {
		if fi.Size() != 0 {
			f.Close()
			return nil, fmt.Errorf("localfs: partial %q has size %d, not %d: %w", name, fi.Size(), size, storage.ErrInvalidRange)
		}
		err = f.Truncate(size) // new: a hole of the full size
	}
	if err != nil {
		f.Close()
		return nil, translate("open partial", name, err)
	}
	return &partial{f: f, direct: openDirect(p), size: size}, nil
}

// CommitPartial implements storage.PartialStore.
func (s *Store) CommitPartial(_ context.Context, name string) error {
	src, err := s.partialPath(name)
	if err != nil {
		return err
	}
	final, _ := s.path(name)
	f, err := os.OpenFile(src, os.O_RDWR, 0)
	if err != nil {
		return translate("commit partial", name, err)
	}
	err = f.Sync()
	f.Close()
	if err == nil {
		err = publish(src, final, s.objects)
	}
	if err != nil {
		return translate("commit partial", name, err)
	}
	return nil
}

// RemovePartial implements storage.PartialStore.
func (s *Store) RemovePartial(_ context.Context, name string) error {
	p, err := s.partialPath(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil {
		return translate("remove partial", name, err)
	}
	return nil
}

// OpenPartialFile opens a partial object's file read-only, for a store
// that stages transfers here and sends them elsewhere at commit.
func (s *Store) OpenPartialFile(name string) (*os.File, error) {
	p, err := s.partialPath(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, translate("open partial", name, err)
	}
	return f, nil
}
