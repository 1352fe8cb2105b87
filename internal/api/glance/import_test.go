package glance

import (
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"hangar/internal/auth"
)

func waitStatus(t *testing.T, e *testEnv, id string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		im := e.show(id)
		for _, w := range want {
			if im["status"] == w {
				return im
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("image %s stuck in %v, want %v", id, im["status"], want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestGlanceDirectImport(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "imported", "disk_format": "raw", "container_format": "bare"})
	data := []byte("staged bytes, imported later")
	if r := e.do("POST", "/v2/images/"+id+"/import", `{"method":{"name":"glance-direct"}}`); r.status != http.StatusConflict {
		t.Fatalf("import before stage: %d", r.status)
	}
	if r := e.do("PUT", "/v2/images/"+id+"/stage", data, "Content-Type: application/octet-stream"); r.status != 204 {
		t.Fatalf("stage: %d %s", r.status, r.body)
	}
	if im := e.show(id); im["status"] != "uploading" || im["size"] != float64(len(data)) {
		t.Fatalf("after stage: %v", im)
	}
	if r := e.do("GET", "/v2/images/"+id+"/file", nil); r.status != http.StatusNoContent {
		t.Fatalf("staged data must not be downloadable: %d", r.status)
	}
	if r := e.do("POST", "/v2/images/"+id+"/import", `{"method":{"name":"glance-direct"}}`); r.status != http.StatusAccepted {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	im := waitStatus(t, e, id, "active")
	sum := md5.Sum(data)
	if im["checksum"] != hex.EncodeToString(sum[:]) || im["os_glance_failed_import"] != "" || im["os_glance_importing_to_stores"] != "" {
		t.Fatalf("after import: %v", im)
	}
	if r := e.do("GET", "/v2/images/"+id+"/file", nil); string(r.body) != string(data) {
		t.Fatal("imported bytes differ")
	}
	if objs := storeObjects(t, e.dir); len(objs) != 1 {
		t.Fatalf("staging data left behind: %v", objs)
	}
	if r := e.do("POST", "/v2/images/"+id+"/import", `{"method":{"name":"copy-image"},"stores":["fs"]}`); r.status != http.StatusConflict {
		t.Fatalf("copy-image to the only store: %d", r.status)
	}
}

func TestWebDownloadImport(t *testing.T) {
	data := make([]byte, 5<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/disk.img" {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	defer origin.Close()
	e := newEnv(t, auth.None{})

	id := e.create(map[string]any{"name": "web"})
	body := `{"method":{"name":"web-download","uri":"` + origin.URL + `/disk.img"}}`
	if r := e.do("POST", "/v2/images/"+id+"/import", body); r.status != http.StatusAccepted {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	im := waitStatus(t, e, id, "active")
	sum := md5.Sum(data)
	if im["checksum"] != hex.EncodeToString(sum[:]) || im["size"] != float64(len(data)) {
		t.Fatalf("after web-download: %v", im)
	}

	// A URI that fails leaves the image queued with the failure recorded.
	bad := e.create(map[string]any{"name": "web-404"})
	body = `{"method":{"name":"web-download","uri":"` + origin.URL + `/missing"}}`
	if r := e.do("POST", "/v2/images/"+bad+"/import", body); r.status != http.StatusAccepted {
		t.Fatalf("import: %d", r.status)
	}
	im = waitStatus(t, e, bad, "queued")
	if im["os_glance_failed_import"] != "fs" || im["size"] != nil {
		t.Fatalf("failed import: %v", im)
	}
}
