package localfs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"hangar/internal/storage"
	"hangar/internal/storage/localfs"
	"hangar/internal/storage/storagetest"
)

func newStore(t *testing.T) storage.Store {
	s, err := localfs.New(context.Background(), localfs.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) { storagetest.Run(t, newStore) }

func TestConfigValidate(t *testing.T) {
	if err := (localfs.Config{}).Validate(); err == nil {
		t.Fatal("empty root accepted")
	}
}

// A sparse partial stays sparse on disk: zero ops free blocks instead of
// writing them.
func TestPartialStaysSparse(t *testing.T) {
	root := t.TempDir()
	s, err := localfs.New(context.Background(), localfs.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.OpenPartial(context.Background(), "big", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.WriteAt(make([]byte, 1<<20), 512<<20)
	p.(storage.Zeroer).Zero(0, 1<<30)
	fi, err := os.Stat(filepath.Join(root, "partial", "big"))
	if err != nil {
		t.Fatal(err)
	}
	if used := diskUsage(fi); used > 2<<20 {
		t.Fatalf("1 GiB partial uses %d bytes on disk, want a sparse file", used)
	}
}
