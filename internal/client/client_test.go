package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"hangar/internal/api/glance"
	"hangar/internal/api/imageio"
	"hangar/internal/auth"
	"hangar/internal/testenv"
	"hangar/internal/transfer"
)

// faults decides, per data-path request, whether to fail it and how.
type faults struct {
	fail func(r *http.Request) int // 0: pass; else answer this status
	gets atomic.Int64              // ranged GETs that got through
}

func (f *faults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.fail != nil && strings.HasPrefix(r.URL.Path, "/images/") {
			if st := f.fail(r); st != 0 {
				io.Copy(io.Discard, r.Body)
				http.Error(w, "injected fault", st)
				return
			}
		}
		if r.Method == "GET" && r.Header.Get("Range") != "" {
			f.gets.Add(1)
		}
		next.ServeHTTP(w, r)
	})
}

// newServer runs the real Image API and data path in-process behind a
// fault injector.
func newServer(t *testing.T) (*Client, *faults) {
	t.Helper()
	st := testenv.New(t, transfer.Config{})
	api := glance.New(st.Catalog, st.Store, st.Transfers, auth.None{}, st.Log, glance.Config{})
	mux := http.NewServeMux()
	mux.Handle("/images/", imageio.New(st.Transfers, st.Log, imageio.Config{}).DataHandler())
	mux.Handle("/", api.Handler())
	f := &faults{}
	srv := httptest.NewServer(f.wrap(mux))
	t.Cleanup(func() { srv.Close(); api.Close() })
	c, err := New(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	return c, f
}

func testFile(t *testing.T, size int) (string, []byte) {
	t.Helper()
	data := make([]byte, size)
	rand.Read(data)
	p := filepath.Join(t.TempDir(), "disk.raw")
	os.WriteFile(p, data, 0o644)
	return p, data
}

// Transient failures (5xx, dropped requests) are retried per range with
// backoff, and the upload and download still end byte-identical.
func TestRetriesTransientFailures(t *testing.T) {
	c, f := newServer(t)
	ctx := context.Background()
	path, data := testFile(t, 12<<20+5)
	var n atomic.Int64
	f.fail = func(r *http.Request) int {
		if (r.Method == "PUT" || r.Method == "GET") && n.Add(1)%3 == 1 {
			return http.StatusServiceUnavailable
		}
		return 0
	}
	im, err := c.CreateImage(ctx, map[string]any{"name": "flaky"})
	if err != nil {
		t.Fatal(err)
	}
	p := &Progress{}
	opt := TransferOptions{Connections: 4, Progress: p, FlushEvery: 1 << 20}
	if _, err := c.UploadFile(ctx, im.ID(), path, opt); err != nil {
		t.Fatalf("upload through faults: %v", err)
	}
	if p.Resent.Load() == 0 {
		t.Fatal("no range was retried: the fault injector did nothing")
	}
	out := filepath.Join(t.TempDir(), "out.raw")
	if _, err := c.DownloadFile(ctx, im.ID(), out, TransferOptions{Connections: 4}); err != nil {
		t.Fatalf("download through faults: %v", err)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, data) {
		t.Fatal("downloaded bytes differ")
	}
}

// A permanent failure stops at once with the server's message.
func TestPermanentFailureStops(t *testing.T) {
	c, f := newServer(t)
	path, _ := testFile(t, 4<<20)
	f.fail = func(r *http.Request) int {
		if r.Method == "PUT" {
			return http.StatusForbidden
		}
		return 0
	}
	im, _ := c.CreateImage(context.Background(), map[string]any{"name": "denied"})
	_, err := c.UploadFile(context.Background(), im.ID(), path, TransferOptions{})
	if err == nil || !strings.Contains(err.Error(), "403") || Transient(err) {
		t.Fatalf("err = %v", err)
	}
}

// An interrupted download run again fetches only the ranges it lacks.
func TestDownloadResumes(t *testing.T) {
	c, f := newServer(t)
	ctx := context.Background()
	path, data := testFile(t, 8*maxOp/4) // 128 MiB: 2 ranges of 64 MiB
	im, _ := c.CreateImage(ctx, map[string]any{"name": "dl"})
	if _, err := c.UploadFile(ctx, im.ID(), path, TransferOptions{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.raw")
	f.fail = func(r *http.Request) int { // the second range is refused
		if r.Method == "GET" && strings.HasPrefix(r.Header.Get("Range"), "bytes=67108864-") {
			return http.StatusForbidden
		}
		return 0
	}
	if _, err := c.DownloadFile(ctx, im.ID(), out, TransferOptions{Connections: 1}); err == nil {
		t.Fatal("download with a refused range succeeded")
	}
	if _, err := os.Stat(out + ".hangar-download"); err != nil {
		t.Fatalf("no progress kept: %v", err)
	}
	f.fail, f.gets = nil, atomic.Int64{}
	if _, err := c.DownloadFile(ctx, im.ID(), out, TransferOptions{Connections: 1}); err != nil {
		t.Fatal(err)
	}
	if got := f.gets.Load(); got != 1 {
		t.Fatalf("the resumed download fetched %d ranges, want only the missing one", got)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, data) {
		t.Fatal("resumed download differs")
	}
	if _, err := os.Stat(out + ".hangar-download"); !os.IsNotExist(err) {
		t.Fatal("progress file left after success")
	}
}
