// Package retry wraps a store so that calls failing with
// storage.ErrUnavailable (a backend that is down or overloaded) are tried
// again with exponential backoff. The wrapper keeps the fast-path
// capabilities of what it wraps: a FileOpener stays a FileOpener, a
// PartialStore a PartialStore, and lacks what the inner store lacks.
package retry

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"hangar/internal/storage"
)

// Policy says how long to keep trying.
type Policy struct {
	Attempts int           // default 6
	First    time.Duration // first wait, doubling (default 200 ms)
	Max      time.Duration // longest wait (default 5 s)
	Log      *slog.Logger
}

func (p *Policy) defaults() {
	if p.Attempts <= 0 {
		p.Attempts = 6
	}
	if p.First <= 0 {
		p.First = 200 * time.Millisecond
	}
	if p.Max <= 0 {
		p.Max = 5 * time.Second
	}
	if p.Log == nil {
		p.Log = slog.Default()
	}
}

// do runs fn until it succeeds, fails for good, or the attempts are spent.
func (p Policy) do(ctx context.Context, op string, fn func(attempt int) error) error {
	wait := p.First
	for attempt := 0; ; attempt++ {
		err := fn(attempt)
		if err == nil || !errors.Is(err, storage.ErrUnavailable) || attempt+1 >= p.Attempts {
			return err
		}
		p.Log.Warn("storage unavailable, retrying", "op", op, "attempt", attempt+1, "in", wait, "err", err)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
		wait = min(2*wait, p.Max)
	}
}

// Wrap returns inner with retries, with the same optional capabilities
// among FileOpener and PartialStore.
func Wrap(inner storage.Store, p Policy) storage.Store {
	p.defaults()
	b := &base{inner: inner, p: p}
	fo, isFile := inner.(storage.FileOpener)
	ps, isPartial := inner.(storage.PartialStore)
	switch {
	case isFile && isPartial:
		return struct {
			*base
			*fileOpener
			*partials
		}{b, &fileOpener{b, fo}, &partials{b, ps}}
	case isFile:
		return struct {
			*base
			*fileOpener
		}{b, &fileOpener{b, fo}}
	case isPartial:
		return struct {
			*base
			*partials
		}{b, &partials{b, ps}}
	}
	return b
}

type base struct {
	inner storage.Store
	p     Policy
}

func (b *base) Stat(ctx context.Context, name string) (info storage.Info, err error) {
	err = b.p.do(ctx, "stat", func(int) error { info, err = b.inner.Stat(ctx, name); return err })
	return info, err
}

func (b *base) Open(ctx context.Context, name string) (r storage.Reader, err error) {
	err = b.p.do(ctx, "open", func(int) error { r, err = b.inner.Open(ctx, name); return err })
	return r, err
}

// Create is not retried: the caller streams the bytes once.
func (b *base) Create(ctx context.Context, name string) (storage.Writer, error) {
	return b.inner.Create(ctx, name)
}

// Delete counts an object gone on a retry as deleted: the first try may
// have removed it before its answer was lost.
func (b *base) Delete(ctx context.Context, name string) error {
	return b.p.do(ctx, "delete", func(attempt int) error {
		err := b.inner.Delete(ctx, name)
		if attempt > 0 && errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		return err
	})
}

// List restarts from the beginning; fn may see an object twice.
func (b *base) List(ctx context.Context, fn func(storage.Info) error) error {
	return b.p.do(ctx, "list", func(int) error { return b.inner.List(ctx, fn) })
}

type fileOpener struct {
	b  *base
	fo storage.FileOpener
}

func (f *fileOpener) OpenFile(ctx context.Context, name string) (file *os.File, err error) {
	err = f.b.p.do(ctx, "open file", func(int) error { file, err = f.fo.OpenFile(ctx, name); return err })
	return file, err
}

type partials struct {
	b  *base
	ps storage.PartialStore
}

func (p *partials) OpenPartial(ctx context.Context, name string, size int64) (part storage.Partial, err error) {
	err = p.b.p.do(ctx, "open partial", func(int) error { part, err = p.ps.OpenPartial(ctx, name, size); return err })
	return part, err
}

// CommitPartial counts a name that exists on a retry as committed: the
// first try may have completed before its answer was lost, and the
// catalog admits one upload per image, so no one else wrote that name.
func (p *partials) CommitPartial(ctx context.Context, name string) error {
	return p.b.p.do(ctx, "commit partial", func(attempt int) error {
		err := p.ps.CommitPartial(ctx, name)
		if attempt > 0 && errors.Is(err, storage.ErrExists) {
			return nil
		}
		return err
	})
}

func (p *partials) RemovePartial(ctx context.Context, name string) error {
	return p.b.p.do(ctx, "remove partial", func(int) error { return p.ps.RemovePartial(ctx, name) })
}
