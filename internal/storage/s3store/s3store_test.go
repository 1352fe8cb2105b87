package s3store

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"hangar/internal/storage"
	"hangar/internal/storage/storagetest"
	"hangar/internal/testenv"
)

// open opens the store on a new bucket of the RGW scripts/test.sh started.
func open(t *testing.T, cacheBytes int64) *Store {
	e, bucket := testenv.S3Bucket(t)
	s, err := New(context.Background(), Config{URL: "s3://" + bucket + "/images?endpoint=" + e.Endpoint,
		AccessKey: e.AccessKey, SecretKey: e.SecretKey, LocalDir: t.TempDir(), CacheBytes: cacheBytes, PartSize: 5 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return open(t, 1<<30) })
}

// Many cold requests of one object at once cost one GET, and all of them
// get the bytes.
func TestCacheCoalescesColdReads(t *testing.T) {
	s := open(t, 1<<30)
	data := storagetest.RandomBytes(t, 12<<20)
	put(t, s, "img", data)
	var fetches atomic.Int32
	inner := s.cache.fetch
	s.cache.fetch = func(ctx context.Context, name string, dst *os.File) error {
		fetches.Add(1)
		return inner(ctx, name, dst)
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := s.OpenFile(context.Background(), "img")
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			if got, _ := io.ReadAll(f); !bytes.Equal(got, data) {
				t.Error("cached copy differs")
			}
		}()
	}
	wg.Wait()
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d backend reads for 16 concurrent cold opens, want 1", n)
	}
}

// The cache stays under its limit by evicting the least recently used
// copy; a copy open at eviction stays readable.
func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	s := open(t, 10<<20) // room for two 4 MiB objects
	objs := map[string][]byte{}
	for _, n := range []string{"a", "b", "c"} {
		objs[n] = storagetest.RandomBytes(t, 4<<20)
		put(t, s, n, objs[n])
	}
	ctx := context.Background()
	fa, _ := s.OpenFile(ctx, "a")
	defer fa.Close()
	fb, _ := s.OpenFile(ctx, "b")
	fb.Close()
	fa2, _ := s.OpenFile(ctx, "a") // a is now more recent than b
	fa2.Close()
	fc, _ := s.OpenFile(ctx, "c") // evicts b
	fc.Close()
	if files, bytes := s.cache.stats(); files != 2 || bytes > 10<<20 {
		t.Fatalf("cache holds %d files, %d bytes", files, bytes)
	}
	if _, ok := s.cache.index["b"]; ok {
		t.Fatal("b, the least recently used, was kept")
	}
	if got, _ := io.ReadAll(fa); !bytes.Equal(got, objs["a"]) {
		t.Fatal("an open cached copy became unreadable")
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenFile(ctx, "a"); err == nil {
		t.Fatal("a deleted object is still served from the cache")
	}
}

// A transfer staged locally commits as parallel parts and reads back.
func TestPartialCommitsAsParts(t *testing.T) {
	s := open(t, 1<<30)
	ctx := context.Background()
	data := storagetest.RandomBytes(t, 23<<20+5)
	p, err := s.OpenPartial(ctx, "tr", int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for off := len(data) - 1<<20; off > -1<<20; off -= 1 << 20 { // backwards
		lo := max(off, 0)
		p.WriteAt(data[lo:min(off+1<<20, len(data))], int64(lo))
	}
	p.Close()
	if err := s.CommitPartial(ctx, "tr"); err != nil {
		t.Fatal(err)
	}
	r, err := s.Open(ctx, "tr")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, _ := io.ReadAll(r); !bytes.Equal(got, data) {
		t.Fatal("committed transfer differs")
	}
	if err := s.CommitPartial(ctx, "tr"); err == nil {
		t.Fatal("a second commit succeeded")
	}
}

func put(t *testing.T, s storage.Store, name string, data []byte) {
	t.Helper()
	w, err := s.Create(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// A missing bucket is an error unless create_bucket=true asks for it.
func TestMissingBucket(t *testing.T) {
	e := testenv.S3Endpoint(t)
	name := "hangar-new-" + uuid.NewString()[:8]
	cfg := Config{URL: "s3://" + name + "?endpoint=" + e.Endpoint, AccessKey: e.AccessKey, SecretKey: e.SecretKey, LocalDir: t.TempDir()}
	if _, err := New(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing bucket: %v", err)
	}
	cfg.URL += "&create_bucket=true"
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "x", []byte("in a new bucket"))
	s.Delete(context.Background(), "x")
	s.cl.RemoveBucket(context.Background(), name)
}
