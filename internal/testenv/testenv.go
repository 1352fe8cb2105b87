// Package testenv builds, for tests, the storage stack the server runs on:
// a SQLite catalog and a local-directory store in a temporary directory,
// and a transfer manager over them. Real engines, no mocks.
package testenv

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"hangar/internal/catalog"
	"hangar/internal/catalog/sqlite"
	"hangar/internal/storage/localfs"
	"hangar/internal/transfer"
)

// Stack is the layers under the APIs.
type Stack struct {
	Dir       string // the temporary data directory
	Catalog   catalog.Catalog
	Store     *localfs.Store
	Transfers *transfer.Manager
	Log       *slog.Logger
}

// New builds a stack in t.TempDir() and closes it at the end of the test.
func New(t testing.TB, cfg transfer.Config) *Stack {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	cat, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(dir, "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() }) // runs last: cleanups run in reverse
	store, err := localfs.New(ctx, localfs.Config{Root: filepath.Join(dir, "store")})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tm, err := transfer.New(cat, store, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	// The checksum backfill runs as in the server.
	bctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); tm.Backfill().Run(bctx) }()
	t.Cleanup(func() { stop(); <-done })
	return &Stack{Dir: dir, Catalog: cat, Store: store, Transfers: tm, Log: log}
}

// WaitChecksums waits until the backfill has recorded image id's Glance
// checksums, and returns the image.
func (s *Stack) WaitChecksums(t testing.TB, id string) *catalog.Image {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		im, err := s.Catalog.GetImage(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if im.Checksum != nil {
			return im
		}
		if time.Now().After(deadline) {
			t.Fatalf("image %s: no checksums after 30 s", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
