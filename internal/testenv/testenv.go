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
	t.Cleanup(func() { cat.Close() })
	store, err := localfs.New(ctx, localfs.Config{Root: filepath.Join(dir, "store")})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tm, err := transfer.New(cat, store, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	return &Stack{Dir: dir, Catalog: cat, Store: store, Transfers: tm, Log: log}
}
