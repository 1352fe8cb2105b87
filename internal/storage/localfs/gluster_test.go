package localfs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"hangar/internal/storage"
	"hangar/internal/storage/localfs"
	"hangar/internal/storage/storagetest"
	"hangar/internal/testenv"
)

// glusterMounts returns the FUSE mounts of one GlusterFS volume that
// scripts/gluster.sh started (scripts/test.sh exports HANGAR_TEST_GLUSTER
// as MOUNT1:MOUNT2). Without them the tests skip in a developer's quick
// run and fail under CI=true.
func glusterMounts(t *testing.T) []string {
	return strings.Split(testenv.Engine(t, "HANGAR_TEST_GLUSTER", "a GlusterFS volume"), ":")
}

// sharedStores opens one store per mount on the same directory of the
// volume: several servers sharing it.
func sharedStores(t *testing.T) []*localfs.Store {
	dir := "test-" + uuid.NewString()
	var stores []*localfs.Store
	for _, mp := range glusterMounts(t) {
		s, err := localfs.New(context.Background(), localfs.Config{Root: filepath.Join(mp, dir)})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Join(glusterMounts(t)[0], dir)) })
	return stores
}

func TestConformanceOnGluster(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return sharedStores(t)[0] })
}

// Two servers on two mounts with Gluster's default caching: what one
// commits, the other reads at once, byte for byte (new names are never
// cached stale); a partial written through both mounts, as one transfer's
// ranges spread over servers, reads back whole through either after each
// side flushed, and commits through either.
func TestSharedMountAcrossClients(t *testing.T) {
	ctx := context.Background()
	st := sharedStores(t)
	if len(st) < 2 {
		t.Fatal("need two mounts")
	}
	a, b := st[0], st[1]

	data := make([]byte, 3<<20+17)
	rand.Read(data)
	w, err := a.Create(ctx, "whole")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, b, "whole"); !bytes.Equal(got, data) {
		t.Fatalf("read through the other mount: %d bytes, differ", len(got))
	}
	// The other server cannot publish over it.
	if w2, err := b.Create(ctx, "whole"); err == nil {
		w2.Write([]byte("other"))
		if err := w2.Close(); err == nil {
			t.Fatal("a second commit of the same name succeeded through the other mount")
		}
	}
	if got := readAll(t, a, "whole"); !bytes.Equal(got, data) {
		t.Fatal("the committed object changed")
	}

	const size = 8 << 20
	img := make([]byte, size)
	rand.Read(img)
	pa, err := a.OpenPartial(ctx, "part", size)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b.OpenPartial(ctx, "part", size)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < size; off += 1 << 20 { // alternate 1 MiB ranges
		p := pa
		if (off>>20)%2 == 1 {
			p = pb
		}
		if _, err := p.WriteAt(img[off:off+1<<20], int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []storage.Partial{pa, pb} {
		if err := p.(storage.Flusher).Flush(); err != nil {
			t.Fatal(err)
		}
	}
	for name, p := range map[string]storage.Partial{"a": pa, "b": pb} {
		got := make([]byte, size)
		if _, err := p.ReadAt(got, 0); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if !bytes.Equal(got, img) {
			t.Fatalf("partial read through mount %s differs", name)
		}
	}
	pa.Close()
	pb.Close()
	if err := b.CommitPartial(ctx, "part"); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, a, "part"); !bytes.Equal(got, img) {
		t.Fatal("committed partial read through the other mount differs")
	}
}

func readAll(t *testing.T, s storage.Store, name string) []byte {
	t.Helper()
	r, err := s.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
