package imageio

import (
	"context"
	"strings"
	"testing"

	"hangar/internal/catalog"
	"hangar/internal/transfer"
)

func TestControlTickets(t *testing.T) {
	e := newEnv(t, transfer.Config{})
	id := e.image()
	ticket := `{"uuid": "t-1", "size": 65536, "ops": ["write"], "timeout": 300, "url": "hangar:` + id + `"}`
	if r := e.controlDo("PUT", "/tickets/t-1", ticket); r.status != 200 {
		t.Fatalf("PUT ticket: %d %s", r.status, r.body)
	}
	if r := e.controlDo("PUT", "/tickets/t-1", ticket); r.status != 409 {
		t.Fatalf("PUT same ticket again: %d", r.status)
	}
	got := decode[map[string]any](t, e.controlDo("GET", "/tickets/t-1", "").body)
	if got["uuid"] != "t-1" || got["size"] != float64(65536) || got["url"] != "hangar:"+id || got["timeout"] != float64(300) {
		t.Fatalf("GET ticket: %v", got)
	}
	if r := e.controlDo("PATCH", "/tickets/t-1", `{"timeout": 600}`); r.status != 200 {
		t.Fatalf("PATCH: %d", r.status)
	}
	put(t, e.data+"/images/t-1", 0, []byte(strings.Repeat("a", 65536)), "y")
	// Removing a write ticket publishes what was written.
	if r := e.controlDo("DELETE", "/tickets/t-1", ""); r.status != 204 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	if im, _ := e.cat.GetImage(context.Background(), id); im.Status != catalog.StatusActive || *im.Size != 65536 {
		t.Fatalf("after DELETE image is %s", im.Status)
	}
	if r := e.controlDo("DELETE", "/tickets/t-1", ""); r.status != 204 {
		t.Fatalf("DELETE again: %d", r.status)
	}
	if r := e.controlDo("GET", "/tickets/t-1", ""); r.status != 404 || string(r.body) != "No such ticket 't-1'\n" {
		t.Fatalf("GET removed: %d %q", r.status, r.body)
	}
}

func TestControlBadTickets(t *testing.T) {
	e := newEnv(t, transfer.Config{})
	id := e.image()
	cases := []struct{ name, body, text string }{
		{"missing size", `{"uuid":"b","ops":["write"],"timeout":1,"url":"hangar:` + id + `"}`, "Required ticket parameter is missing: size"},
		{"file url", `{"uuid":"b","size":1,"ops":["write"],"timeout":1,"url":"file:///etc/passwd"}`, "Unsupported url"},
		{"unknown image", `{"uuid":"b","size":1,"ops":["write"],"timeout":1,"url":"hangar:nope"}`, "No such image"},
		{"negative size", `{"uuid":"b","size":-1,"ops":["write"],"timeout":1,"url":"hangar:` + id + `"}`, "non-negative"},
		{"bad op", `{"uuid":"b","size":1,"ops":["delete"],"timeout":1,"url":"hangar:` + id + `"}`, "unknown op"},
		{"uuid mismatch", `{"uuid":"other","size":1,"ops":["write"],"timeout":1,"url":"hangar:` + id + `"}`, "does not match"},
		{"not JSON", `{`, "Invalid ticket"},
	}
	for _, c := range cases {
		r := e.controlDo("PUT", "/tickets/b", c.body)
		if r.status != 400 || !strings.Contains(string(r.body), c.text) {
			t.Errorf("%s: %d %q", c.name, r.status, r.body)
		}
	}
	if im, _ := e.cat.GetImage(context.Background(), id); im.Status != catalog.StatusQueued {
		t.Fatalf("bad tickets changed the image: %s", im.Status)
	}
}
