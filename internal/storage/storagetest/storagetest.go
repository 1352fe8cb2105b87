// Package storagetest is the conformance suite every storage backend runs
// against its real engine: storagetest.Run(t, newStore). It checks the core
// Store contract and probes the optional capabilities a backend offers.
package storagetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"sync"
	"testing"

	"hangar/internal/storage"
)

// Run runs the suite; newStore returns a fresh, empty store for each subtest.
func Run(t *testing.T, newStore func(t *testing.T) storage.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s storage.Store)
	}{
		{"CreateOpenRoundTrip", testRoundTrip},
		{"EmptyObject", testEmpty},
		{"NotFound", testNotFound},
		{"InvalidNames", testInvalidNames},
		{"NothingVisibleBeforeClose", testInvisibleUntilClose},
		{"AbortLeavesNothing", testAbort},
		{"CommittedObjectsAreImmutable", testImmutable},
		{"DeleteAndList", testDeleteList},
		{"ConcurrentCreatesOfOneName", testConcurrentCreate},
		{"FileOpener", testFileOpener},
		{"PartialRandomWrites", testPartial},
		{"PartialZeroAndExtents", testPartialZero},
		{"PartialReopenKeepsData", testPartialReopen},
		{"PartialRejectsOutOfRange", testPartialRange},
		{"TempCleaner", testTempCleaner},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

// RandomBytes returns n random bytes.
func RandomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func put(t *testing.T, s storage.Store, name string, data []byte) {
	t.Helper()
	w, err := s.Create(context.Background(), name)
	if err != nil {
		t.Fatalf("Create(%q): %v", name, err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func get(t *testing.T, s storage.Store, name string) []byte {
	t.Helper()
	r, err := s.Open(context.Background(), name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %q: %v", name, err)
	}
	if r.Size() != int64(len(b)) {
		t.Fatalf("Size() = %d, read %d bytes", r.Size(), len(b))
	}
	return b
}

func testRoundTrip(t *testing.T, s storage.Store) {
	data := RandomBytes(t, 3<<20+17)
	put(t, s, "img-1", data)
	if got := get(t, s, "img-1"); !bytes.Equal(got, data) {
		t.Fatal("read back different bytes")
	}
	info, err := s.Stat(context.Background(), "img-1")
	if err != nil || info.Size != int64(len(data)) || info.Name != "img-1" {
		t.Fatalf("Stat = %+v, %v", info, err)
	}
	r, err := s.Open(context.Background(), "img-1")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 100)
	if _, err := r.ReadAt(buf, 1<<20); err != nil || !bytes.Equal(buf, data[1<<20:1<<20+100]) {
		t.Fatalf("ReadAt: %v", err)
	}
}

func testEmpty(t *testing.T, s storage.Store) {
	put(t, s, "empty", nil)
	if got := get(t, s, "empty"); len(got) != 0 {
		t.Fatalf("empty object has %d bytes", len(got))
	}
}

func testNotFound(t *testing.T, s storage.Store) {
	ctx := context.Background()
	if _, err := s.Stat(ctx, "missing"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat: %v, want ErrNotFound", err)
	}
	if _, err := s.Open(ctx, "missing"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Open: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "missing"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Delete: %v, want ErrNotFound", err)
	}
}

func testInvalidNames(t *testing.T, s storage.Store) {
	ctx := context.Background()
	for _, name := range []string{"", "..", ".hidden", "../etc/passwd", "a/b", "a\x00b", "sp ace"} {
		if _, err := s.Create(ctx, name); !errors.Is(err, storage.ErrInvalidName) {
			t.Errorf("Create(%q): %v, want ErrInvalidName", name, err)
		}
		if _, err := s.Open(ctx, name); !errors.Is(err, storage.ErrInvalidName) {
			t.Errorf("Open(%q): %v, want ErrInvalidName", name, err)
		}
	}
}

func testInvisibleUntilClose(t *testing.T, s storage.Store) {
	w, err := s.Create(context.Background(), "pending")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("half"))
	if _, err := s.Stat(context.Background(), "pending"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Stat before Close: %v, want ErrNotFound", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "pending"); string(got) != "half" {
		t.Fatalf("got %q", got)
	}
}

func testAbort(t *testing.T, s storage.Store) {
	w, err := s.Create(context.Background(), "aborted")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("junk"))
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close after Abort: %v", err)
	}
	if _, err := s.Stat(context.Background(), "aborted"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Stat after Abort: %v, want ErrNotFound", err)
	}
	put(t, s, "aborted", []byte("again")) // the name is free again
}

func testImmutable(t *testing.T, s storage.Store) {
	put(t, s, "fixed", []byte("original"))
	w, err := s.Create(context.Background(), "fixed")
	if err == nil {
		w.Write([]byte("replacement"))
		err = w.Close()
	}
	if !errors.Is(err, storage.ErrExists) {
		t.Fatalf("second Create+Close: %v, want ErrExists", err)
	}
	if got := get(t, s, "fixed"); string(got) != "original" {
		t.Fatalf("committed object changed to %q", got)
	}
}

func testDeleteList(t *testing.T, s storage.Store) {
	ctx := context.Background()
	put(t, s, "a", []byte("1"))
	put(t, s, "b", []byte("22"))
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	if err := s.List(ctx, func(i storage.Info) error { got[i.Name] = i.Size; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["b"] != 2 {
		t.Fatalf("List = %v, want only b (2 bytes)", got)
	}
}

func testConcurrentCreate(t *testing.T, s storage.Store) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			w, err := s.Create(context.Background(), "race")
			if err != nil {
				return
			}
			w.Write(bytes.Repeat([]byte{byte(i)}, 4096))
			if w.Close() == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	got := get(t, s, "race")
	if len(got) != 4096 || !bytes.Equal(got, bytes.Repeat(got[:1], 4096)) {
		t.Fatalf("%d writers won; object is not one writer's bytes", wins)
	}
	if _, exclusive := s.(storage.ExclusiveCreator); exclusive && wins != 1 {
		t.Fatalf("%d writers won, want exactly one", wins)
	}
}

func testFileOpener(t *testing.T, s storage.Store) {
	fo, ok := s.(storage.FileOpener)
	if !ok {
		t.Skip("backend has no FileOpener (no sendfile path); that is allowed")
	}
	put(t, s, "file", []byte("sendfile me"))
	f, err := fo.OpenFile(context.Background(), "file")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	if string(b) != "sendfile me" {
		t.Fatalf("got %q", b)
	}
	if _, err := fo.OpenFile(context.Background(), "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("OpenFile(missing): %v", err)
	}
}
