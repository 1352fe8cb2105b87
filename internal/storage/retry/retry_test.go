package retry_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"hangar/internal/storage"
	"hangar/internal/storage/localfs"
	"hangar/internal/storage/retry"
	"hangar/internal/storage/storagetest"
)

// flaky fails every other call of the methods the wrapper retries with
// storage.ErrUnavailable before passing it to a real local store: a
// backend that drops half its requests.
type flaky struct {
	*localfs.Store
	calls atomic.Int64
}

func (f *flaky) fail() error {
	if f.calls.Add(1)%2 == 1 {
		return fmt.Errorf("injected: %w", storage.ErrUnavailable)
	}
	return nil
}

func (f *flaky) Stat(ctx context.Context, n string) (storage.Info, error) {
	if err := f.fail(); err != nil {
		return storage.Info{}, err
	}
	return f.Store.Stat(ctx, n)
}

func (f *flaky) Open(ctx context.Context, n string) (storage.Reader, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Store.Open(ctx, n)
}

func (f *flaky) CommitPartial(ctx context.Context, n string) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.CommitPartial(ctx, n)
}

func newFlaky(t *testing.T) *flaky {
	s, err := localfs.New(context.Background(), localfs.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return &flaky{Store: s}
}

var fast = retry.Policy{Attempts: 4, First: time.Millisecond, Max: 5 * time.Millisecond}

// Through the wrapper, a store failing half its calls passes the whole
// conformance suite.
func TestConformanceThroughFailures(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return retry.Wrap(newFlaky(t), fast) })
}

// The wrapper has exactly the fast paths of what it wraps.
func TestKeepsCapabilities(t *testing.T) {
	w := retry.Wrap(newFlaky(t), fast)
	if _, ok := w.(storage.FileOpener); !ok {
		t.Error("lost FileOpener")
	}
	if _, ok := w.(storage.PartialStore); !ok {
		t.Error("lost PartialStore")
	}
	plain := retry.Wrap(struct{ storage.Store }{newFlaky(t)}, fast)
	if _, ok := plain.(storage.FileOpener); ok {
		t.Error("gained FileOpener")
	}
	if _, ok := plain.(storage.PartialStore); ok {
		t.Error("gained PartialStore")
	}
}

// Permanent errors come back at once; a backend down for good fails
// after the attempts, with its error.
func TestGivesUp(t *testing.T) {
	f := newFlaky(t)
	w := retry.Wrap(f, fast)
	if _, err := w.Stat(context.Background(), "missing"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	down := retry.Wrap(struct{ storage.Store }{downStore{f.Store}}, fast)
	start := time.Now()
	if _, err := down.Stat(context.Background(), "x"); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("down: %v", err)
	}
	t.Logf("gave up after %v", time.Since(start))
}

type downStore struct{ storage.Store }

func (downStore) Stat(context.Context, string) (storage.Info, error) {
	return storage.Info{}, storage.ErrUnavailable
}
