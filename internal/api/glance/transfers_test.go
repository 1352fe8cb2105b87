package glance

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"strconv"
	"testing"

	"hangar/internal/auth"
)

// A transfer finalized on the Image API gives the image exactly what a
// whole-file upload of the same bytes gives.
func TestTransferLifecycle(t *testing.T) {
	e := newEnv(t, auth.None{})
	data := bytes.Repeat([]byte("hangar transfer "), 1<<16) // 1 MiB
	whole := e.create(map[string]any{"name": "whole", "disk_format": "raw"})
	e.upload(whole, data)

	id := e.create(map[string]any{"name": "xfer", "disk_format": "raw"})
	r := e.do("POST", "/v2/images/"+id+"/transfers", map[string]any{"ops": []string{"write"}, "size": len(data)})
	if r.status != http.StatusCreated {
		t.Fatalf("create transfer: %d %s", r.status, r.body)
	}
	tr := r.json(t)
	if tr["image_id"] != id || tr["phase"] != "transferring" || tr["transfer_url"] != e.url+"/images/"+tr["id"].(string) {
		t.Fatalf("transfer: %v", tr)
	}
	if im := e.show(id); im["status"] != "saving" {
		t.Fatalf("image during transfer: %v", im["status"])
	}
	if r := e.upload(id, data); r.status != http.StatusConflict {
		t.Fatalf("PUT /file during a write transfer: %d", r.status)
	}
	// Two halves, second first.
	half := len(data) / 2
	for _, part := range []struct{ off, end int }{{half, len(data)}, {0, half}} {
		req, _ := http.NewRequest("PUT", tr["transfer_url"].(string), bytes.NewReader(data[part.off:part.end]))
		req.Header.Set("Content-Range", "bytes "+itoa(part.off)+"-"+itoa(part.end-1)+"/*")
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("PUT range: %v %v", err, res.StatusCode)
		}
		res.Body.Close()
	}
	tid := tr["id"].(string)
	if got := e.do("GET", "/v2/images/"+id+"/transfers/"+tid, nil).json(t); got["transferred"] != float64(len(data)) {
		t.Fatalf("progress: %v", got)
	}
	// The PUTs flushed (flush=y is the default): both halves are done.
	list := e.do("GET", "/v2/images/"+id+"/transfers", nil).json(t)["transfers"].([]any)
	done := list[0].(map[string]any)["done_ranges"].([]any)
	if len(list) != 1 || len(done) != 1 || done[0].(map[string]any)["length"] != float64(len(data)) {
		t.Fatalf("transfer list: %v", list)
	}
	r = e.do("POST", "/v2/images/"+id+"/transfers/"+tid+"/finalize", nil)
	if r.status != 200 || r.json(t)["phase"] != "finished" {
		t.Fatalf("finalize: %d %s", r.status, r.body)
	}
	// Glance's checksums of a transfer arrive after finalize (backfill).
	if b := e.show(id); b["status"] != "active" || b["checksum"] != nil {
		t.Logf("right after finalize: %v %v", b["status"], b["checksum"])
	}
	e.st.WaitChecksums(t, id)
	a, b := e.show(whole), e.show(id)
	sum := md5.Sum(data)
	for _, k := range []string{"size", "virtual_size", "checksum", "os_hash_algo", "os_hash_value", "status"} {
		if a[k] != b[k] {
			t.Errorf("%s: whole upload %v, transfer %v", k, a[k], b[k])
		}
	}
	if b["checksum"] != hex.EncodeToString(sum[:]) {
		t.Errorf("checksum %v", b["checksum"])
	}
	if r := e.do("POST", "/v2/images/"+id+"/transfers/"+tid+"/finalize", nil); r.status != http.StatusConflict {
		t.Errorf("second finalize: %d", r.status)
	}
	if r := e.do("POST", "/v2/images/"+id+"/transfers", map[string]any{"ops": []string{"write"}, "size": 10}); r.status != http.StatusConflict {
		t.Errorf("write transfer on an active image: %d", r.status)
	}
}

func TestTransferCancelAndBadRequests(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "c"})
	bad := []map[string]any{
		{"ops": []string{"write"}, "size": 0},
		{"ops": []string{"write"}, "size": -5},
		{"ops": []string{"erase"}, "size": 10},
		{"ops": []string{}, "size": 10},
		{"ops": []string{"read"}}, // image not active
	}
	for _, b := range bad {
		if r := e.do("POST", "/v2/images/"+id+"/transfers", b); r.status != 400 && r.status != 409 {
			t.Errorf("%v: %d %s", b, r.status, r.body)
		}
	}
	if r := e.do("POST", "/v2/images/"+id+"/transfers", `{"ops": "write"}`); r.status != 400 {
		t.Errorf("wrong-typed ops: %d", r.status)
	}
	tr := e.do("POST", "/v2/images/"+id+"/transfers", map[string]any{"ops": []string{"write"}, "size": 4096}).json(t)
	tid := tr["id"].(string)
	if r := e.do("DELETE", "/v2/images/"+id+"/transfers/"+tid, nil); r.status != 204 {
		t.Fatalf("cancel: %d", r.status)
	}
	if im := e.show(id); im["status"] != "queued" {
		t.Fatalf("after cancel: %v", im["status"])
	}
	if got := e.do("GET", "/v2/images/"+id+"/transfers/"+tid, nil).json(t); got["phase"] != "cancelled" {
		t.Fatalf("phase after cancel: %v", got["phase"])
	}
	if r := e.do("GET", "/v2/images/"+id+"/transfers/nope", nil); r.status != 404 {
		t.Fatalf("unknown transfer: %d", r.status)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
