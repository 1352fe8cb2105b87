package glance

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha512"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"hangar/internal/auth"
)

func TestCreateShowsGlanceRecord(t *testing.T) {
	e := newEnv(t, auth.None{})
	r := e.do("POST", "/v2/images", map[string]any{"id": "11111111-2222-3333-4444-555555555555",
		"name": "custom", "disk_format": "qcow2", "container_format": "bare", "visibility": "private",
		"tags": []string{"a", "b"}, "min_disk": 1, "min_ram": 512, "os_distro": "cirros"})
	if r.status != http.StatusCreated {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if loc := r.header.Get("Location"); loc != e.url+"/v2/images/11111111-2222-3333-4444-555555555555" {
		t.Errorf("Location = %q", loc)
	}
	if r.header.Get("OpenStack-image-import-methods") != "glance-direct,web-download,copy-image" {
		t.Errorf("import methods header missing")
	}
	// Custom properties come first, then Glance's fields in its order.
	body := string(r.body)
	order := []string{`"os_distro"`, `"name"`, `"disk_format"`, `"container_format"`, `"visibility"`,
		`"size": null`, `"virtual_size": null`, `"status": "queued"`, `"checksum": null`, `"protected"`,
		`"min_ram": 512`, `"min_disk": 1`, `"owner": null`, `"os_hidden"`, `"os_hash_algo": null`,
		`"os_hash_value": null`, `"id"`, `"created_at"`, `"updated_at"`, `"tags"`, `"self"`, `"file"`, `"schema"`}
	last := -1
	for _, k := range order {
		i := strings.Index(body, k)
		if i <= last {
			t.Fatalf("%s out of order in %s", k, body)
		}
		last = i
	}
	if strings.Contains(body, `"stores"`) {
		t.Error("stores shown before any data")
	}
}

func TestUploadDownloadChecksums(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "x", "disk_format": "raw", "container_format": "bare"})
	if r := e.do("GET", "/v2/images/"+id+"/file", nil); r.status != http.StatusNoContent {
		t.Fatalf("download before upload: %d", r.status)
	}
	data := make([]byte, 3<<20+5)
	rand.Read(data)
	if r := e.upload(id, data); r.status != http.StatusNoContent {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	im := e.show(id)
	m, s := md5.Sum(data), sha512.Sum512(data)
	if im["status"] != "active" || im["checksum"] != hex.EncodeToString(m[:]) ||
		im["os_hash_value"] != hex.EncodeToString(s[:]) || im["os_hash_algo"] != "sha512" ||
		im["size"] != float64(len(data)) || im["virtual_size"] != float64(len(data)) || im["stores"] != "fs" {
		t.Fatalf("record after upload: %v", im)
	}
	r := e.do("GET", "/v2/images/"+id+"/file", nil)
	if r.status != 200 || string(r.body) != string(data) || r.header.Get("Content-MD5") != im["checksum"] {
		t.Fatalf("download: %d, %d bytes, md5 header %q", r.status, len(r.body), r.header.Get("Content-MD5"))
	}
	if r := e.upload(id, data, "Accept: application/json"); r.status != http.StatusConflict ||
		!strings.Contains(string(r.body), "Image status transition from active to saving is not allowed") {
		t.Fatalf("second upload: %d %s", r.status, r.body)
	}
}

func TestChunkedUpload(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "chunked"})
	data := strings.Repeat("chunk", 100000)
	// A reader of unknown length makes net/http send Transfer-Encoding: chunked.
	r := e.do("PUT", "/v2/images/"+id+"/file", struct{ *strings.Reader }{strings.NewReader(data)},
		"Content-Type: application/octet-stream")
	if r.status != http.StatusNoContent {
		t.Fatalf("chunked upload: %d %s", r.status, r.body)
	}
	if im := e.show(id); im["size"] != float64(len(data)) {
		t.Fatalf("size %v", im["size"])
	}
}

func TestRangeDownloads(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "r"})
	data := make([]byte, 65536)
	rand.Read(data)
	e.upload(id, data)
	cases := []struct {
		rng, contentRange string
		status            int
		body              []byte
	}{
		{"bytes=0-99", "bytes 0-99/65536", 206, data[:100]},
		{"bytes=-100", "bytes 65436-65535/65536", 206, data[65436:]},
		{"bytes=65000-", "bytes 65000-65535/65536", 206, data[65000:]},
		{"bytes=999999-", "bytes */65536", 416, nil},
		{"bytes=0-9,20-29", "", 400, nil},
		{"bytes=abc", "", 400, nil},
		{"bytes=-1-5", "", 400, nil},
		{"bytes=99999999999999999999999-", "", 400, nil},
	}
	for _, c := range cases {
		r := e.do("GET", "/v2/images/"+id+"/file", nil, "Range: "+c.rng, "Accept: application/json")
		if r.status != c.status || r.header.Get("Content-Range") != c.contentRange {
			t.Errorf("%s: %d %q, want %d %q (%s)", c.rng, r.status, r.header.Get("Content-Range"), c.status, c.contentRange, r.body)
			continue
		}
		if c.body != nil && string(r.body) != string(c.body) {
			t.Errorf("%s: wrong bytes", c.rng)
		}
		if c.status >= 400 && r.json(t)["code"] == nil {
			t.Errorf("%s: error body is not Glance's JSON", c.rng)
		}
	}
}

func TestDeleteAndProtected(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "p", "protected": true})
	e.upload(id, []byte("data"))
	if r := e.do("DELETE", "/v2/images/"+id, nil); r.status != http.StatusForbidden {
		t.Fatalf("delete protected: %d", r.status)
	}
	patch := `[{"op":"replace","path":"/protected","value":false}]`
	if r := e.do("PATCH", "/v2/images/"+id, patch, "Content-Type: "+patchV21); r.status != 200 {
		t.Fatalf("unprotect: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", "/v2/images/"+id, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d", r.status)
	}
	r := e.do("DELETE", "/v2/images/"+id, nil, "Accept: application/json")
	if r.status != http.StatusNotFound || !strings.Contains(string(r.body), "Failed to find image") {
		t.Fatalf("delete again: %d %s", r.status, r.body)
	}
	if names := storeObjects(t, e.dir); len(names) != 0 {
		t.Fatalf("data left after delete: %v", names)
	}
}

func TestPatchTagsAndActivation(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "cirros", "disk_format": "raw"})
	patch := `[{"op":"replace","path":"/name","value":"renamed"},{"op":"add","path":"/os_distro","value":"cirros"},
		{"op":"add","path":"/hw_foo","value":"1"},{"op":"remove","path":"/hw_foo"}]`
	r := e.do("PATCH", "/v2/images/"+id, patch, "Content-Type: "+patchV21)
	im := r.json(t)
	if r.status != 200 || im["name"] != "renamed" || im["os_distro"] != "cirros" || im["hw_foo"] != nil {
		t.Fatalf("patch: %d %v", r.status, im)
	}
	if r := e.do("PUT", "/v2/images/"+id+"/tags/fast", nil); r.status != 204 {
		t.Fatalf("tag: %d", r.status)
	}
	if tags := e.show(id)["tags"].([]any); len(tags) != 1 || tags[0] != "fast" {
		t.Fatalf("tags %v", tags)
	}
	if r := e.do("DELETE", "/v2/images/"+id+"/tags/fast", nil); r.status != 204 {
		t.Fatalf("untag: %d", r.status)
	}
	if r := e.do("POST", "/v2/images/"+id+"/actions/deactivate", nil); r.status != http.StatusForbidden {
		t.Fatalf("deactivate queued: %d", r.status)
	}
	e.upload(id, []byte("bytes"))
	for _, step := range []struct{ action, status string }{{"deactivate", "deactivated"}, {"reactivate", "active"}} {
		if r := e.do("POST", "/v2/images/"+id+"/actions/"+step.action, nil); r.status != 204 {
			t.Fatalf("%s: %d", step.action, r.status)
		}
		if s := e.show(id)["status"]; s != step.status {
			t.Fatalf("after %s: %v", step.action, s)
		}
	}
	r = e.do("PATCH", "/v2/images/"+id, `[{"op":"replace","path":"/disk_format","value":"qcow2"}]`,
		"Content-Type: "+patchV21, "Accept: application/json")
	if r.status != http.StatusForbidden || !strings.Contains(string(r.body), "can be only replaced for a queued image") {
		t.Fatalf("disk_format of active image: %d %s", r.status, r.body)
	}
}
