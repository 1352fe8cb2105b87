package storagetest

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"hangar/internal/storage"
)

func partialStore(t *testing.T, s storage.Store) storage.PartialStore {
	t.Helper()
	ps, ok := s.(storage.PartialStore)
	if !ok {
		t.Skip("backend has no PartialStore (no random-access writes); that is allowed")
	}
	return ps
}

const block = 64 << 10

func testPartial(t *testing.T, s storage.Store) {
	ps := partialStore(t, s)
	ctx := context.Background()
	size := int64(64*block + 123)
	want := RandomBytes(t, int(size))
	p, err := ps.OpenPartial(ctx, "rand", size)
	if err != nil {
		t.Fatal(err)
	}
	// 8 writers, interleaved blocks, shuffled order.
	offs := rand.Perm(65)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(offs); i += 8 {
				off := int64(offs[i]) * block
				end := min(off+block, size)
				if _, err := p.WriteAt(want[off:end], off); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	if f, ok := p.(storage.Flusher); ok {
		if err := f.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	if _, err := s.Stat(ctx, "rand"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("partial visible before commit: %v", err)
	}
	if err := ps.CommitPartial(ctx, "rand"); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "rand"); !bytes.Equal(got, want) {
		t.Fatal("committed partial differs from what was written")
	}
	if err := ps.RemovePartial(ctx, "rand"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("RemovePartial after commit: %v, want ErrNotFound", err)
	}
}

func testPartialZero(t *testing.T, s storage.Store) {
	ps := partialStore(t, s)
	ctx := context.Background()
	size := int64(4 << 20)
	p, err := ps.OpenPartial(ctx, "sparse", size)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	data := bytes.Repeat([]byte{0xAB}, 1<<20)
	p.WriteAt(data, 0)
	p.WriteAt(data, 2<<20)
	z, ok := p.(storage.Zeroer)
	if !ok {
		t.Skip("partial has no Zeroer")
	}
	if err := z.Zero(2<<20, 1<<20); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 1<<20)
	p.ReadAt(got, 2<<20)
	if !bytes.Equal(got, make([]byte, 1<<20)) {
		t.Fatal("zeroed range does not read as zeros")
	}
	p.ReadAt(got, 0)
	if !bytes.Equal(got, data) {
		t.Fatal("zero touched bytes outside its range")
	}
	ex, ok := p.(storage.Extenter)
	if !ok {
		return
	}
	exts, err := ex.Extents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkExtents(t, exts, size)
	if exts[0].Zero || exts[0].Offset != 0 || exts[0].Length < 1<<20 {
		t.Fatalf("first extent %+v, want data covering the first MiB", exts[0])
	}
	if last := exts[len(exts)-1]; !last.Zero {
		t.Fatalf("last extent %+v, want a hole", last)
	}
}

// checkExtents verifies extents cover [0,size) without gaps and alternate.
func checkExtents(t *testing.T, exts []storage.Extent, size int64) {
	t.Helper()
	var off int64
	for i, e := range exts {
		if e.Offset != off || e.Length <= 0 || (i > 0 && exts[i-1].Zero == e.Zero) {
			t.Fatalf("extents not contiguous and coalesced: %+v", exts)
		}
		off += e.Length
	}
	if off != size {
		t.Fatalf("extents cover %d bytes, want %d", off, size)
	}
}

func testPartialReopen(t *testing.T, s storage.Store) {
	ps := partialStore(t, s)
	ctx := context.Background()
	p, err := ps.OpenPartial(ctx, "resume", 8192)
	if err != nil {
		t.Fatal(err)
	}
	p.WriteAt([]byte("first half"), 0)
	p.Close()
	if _, err := ps.OpenPartial(ctx, "resume", 4096); !errors.Is(err, storage.ErrInvalidRange) {
		t.Fatalf("reopen with another size: %v, want ErrInvalidRange", err)
	}
	p, err = ps.OpenPartial(ctx, "resume", 8192)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got := make([]byte, 10)
	p.ReadAt(got, 0)
	if string(got) != "first half" {
		t.Fatalf("after reopen got %q", got)
	}
	if err := ps.RemovePartial(ctx, "resume"); err != nil {
		t.Fatal(err)
	}
}

func testPartialRange(t *testing.T, s storage.Store) {
	ps := partialStore(t, s)
	p, err := ps.OpenPartial(context.Background(), "bounded", 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cases := []struct {
		off int64
		n   int
	}{{-1, 1}, {999, 2}, {1001, 0}, {1 << 62, 1}}
	for _, c := range cases {
		if _, err := p.WriteAt(make([]byte, c.n), c.off); !errors.Is(err, storage.ErrInvalidRange) {
			t.Errorf("WriteAt(%d bytes at %d): %v, want ErrInvalidRange", c.n, c.off, err)
		}
	}
	if z, ok := p.(storage.Zeroer); ok {
		if err := z.Zero(900, 200); !errors.Is(err, storage.ErrInvalidRange) {
			t.Errorf("Zero past end: %v, want ErrInvalidRange", err)
		}
	}
	if _, err := ps.OpenPartial(context.Background(), "neg", -5); !errors.Is(err, storage.ErrInvalidRange) {
		t.Errorf("negative size: %v", err)
	}
}

func testTempCleaner(t *testing.T, s storage.Store) {
	tc, ok := s.(storage.TempCleaner)
	if !ok {
		t.Skip("backend keeps no temp data")
	}
	w, err := s.Create(context.Background(), "crashed")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("half an upload"))
	// Simulate a crash: the writer is never closed, recovery cleans up.
	if err := tc.RemoveTemp(context.Background(), "crashed"); err != nil {
		t.Fatal(err)
	}
	put(t, s, "crashed", []byte("fresh"))
	if got := get(t, s, "crashed"); string(got) != "fresh" {
		t.Fatalf("got %q", got)
	}
}
