package glance

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"hangar/internal/auth"
	"hangar/internal/catalog"
)

// A client that hangs up mid-upload leaves the image queued, with no bytes
// anywhere, and a new upload works.
func TestAbortedUploadReturnsToQueued(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "aborted"})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("PUT", e.url+"/v2/images/"+id+"/file", pr)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.ContentLength = 10 << 20
	done := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	pw.Write(make([]byte, 2<<20))
	waitStatus(t, e, id, "saving")
	pw.CloseWithError(errors.New("client gone"))
	<-done
	im := waitStatus(t, e, id, "queued")
	if im["size"] != nil || im["checksum"] != nil {
		t.Fatalf("after abort: %v", im)
	}
	if objs := storeObjects(t, e.dir); len(objs) != 0 {
		t.Fatalf("partial bytes left: %v", objs)
	}
	if r := e.upload(id, []byte("complete")); r.status != 204 {
		t.Fatalf("upload after abort: %d %s", r.status, r.body)
	}
}

// Recover after a crash: images caught mid-upload return to queued and
// their temp data is removed; completed stages are kept; active images are
// untouched.
func TestRecoverAfterCrash(t *testing.T) {
	e := newEnv(t, auth.None{})
	ctx := context.Background()
	active := e.create(map[string]any{"name": "active"})
	e.upload(active, []byte("safe"))
	saving := e.create(map[string]any{"name": "saving"})
	staged := e.create(map[string]any{"name": "staged"})
	e.do("PUT", "/v2/images/"+staged+"/stage", "staged", "Content-Type: application/octet-stream")

	// Simulate the state kill -9 leaves: status saving, a temp file.
	w, err := e.api.store.Create(ctx, saving)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("half"))
	e.api.cat.UpdateImage(ctx, saving, func(im *catalog.Image) error { im.Status = catalog.StatusSaving; return nil })

	n, err := e.api.Recover(ctx)
	if err != nil || n != 2 {
		t.Fatalf("Recover = %d, %v", n, err)
	}
	if im := e.show(saving); im["status"] != "queued" {
		t.Fatalf("saving image after recover: %v", im["status"])
	}
	if im := e.show(staged); im["status"] != "uploading" || im["size"] != float64(6) {
		t.Fatalf("staged image after recover: %v", im)
	}
	if im := e.show(active); im["status"] != "active" {
		t.Fatalf("active image after recover: %v", im["status"])
	}
	for _, o := range storeObjects(t, e.dir) {
		if strings.HasPrefix(o, "tmp/") {
			t.Fatalf("temp data left: %s", o)
		}
	}
	if r := e.upload(saving, []byte("whole")); r.status != 204 {
		t.Fatalf("re-upload: %d", r.status)
	}
}

// Deleting an image while its upload runs: the upload finds the record
// gone, removes its bytes and answers 410, as Glance does.
func TestDeleteDuringUpload(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "doomed"})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("PUT", e.url+"/v2/images/"+id+"/file", pr)
	req.Header.Set("Content-Type", "application/octet-stream")
	status := make(chan int, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			status <- 0
			return
		}
		res.Body.Close()
		status <- res.StatusCode
	}()
	pw.Write([]byte("some bytes"))
	waitStatus(t, e, id, "saving")
	if r := e.do("DELETE", "/v2/images/"+id, nil); r.status != 204 {
		t.Fatalf("delete: %d", r.status)
	}
	pw.Close()
	select {
	case s := <-status:
		if s != http.StatusGone {
			t.Fatalf("upload status %d, want 410", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("upload did not finish")
	}
	if objs := storeObjects(t, e.dir); len(objs) != 0 {
		t.Fatalf("bytes of a deleted image left: %v", objs)
	}
}
