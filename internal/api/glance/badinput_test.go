package glance

import (
	"net/http"
	"strings"
	"testing"

	"hangar/internal/auth"
)

// Every class of bad input gets Glance's status, an error body in Glance's
// format, and changes nothing.
func TestBadInput(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "target", "disk_format": "raw"})
	e.upload(id, []byte("original bytes"))
	before := string(e.do("GET", "/v2/images/"+id, nil).body)
	json := "Content-Type: application/json"
	patch := "Content-Type: " + patchV21
	octet := "Content-Type: application/octet-stream"
	cases := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		message                  string
	}{
		{"malformed JSON", "POST", "/v2/images", `{"name": `, []string{json}, 400, "Malformed JSON"},
		{"JSON not an object", "POST", "/v2/images", `["name"]`, []string{json}, 400, "Malformed JSON"},
		{"trailing garbage", "POST", "/v2/images", `{"name":"a"} x`, []string{json}, 400, "Malformed JSON"},
		{"text/plain body", "POST", "/v2/images", `name=x`, []string{"Content-Type: text/plain"}, 400, "Malformed JSON"},
		{"bad disk_format", "POST", "/v2/images", `{"disk_format":"foo"}`, []string{json}, 400, "'foo' is not one of"},
		{"bad container_format", "POST", "/v2/images", `{"container_format":"zip"}`, []string{json}, 400, "'zip' is not one of"},
		{"name wrong type", "POST", "/v2/images", `{"name": 5}`, []string{json}, 400, "is not of type"},
		{"name too long", "POST", "/v2/images", `{"name":"` + strings.Repeat("n", 256) + `"}`, []string{json}, 400, "too long"},
		{"min_ram negative", "POST", "/v2/images", `{"min_ram": -1}`, []string{json}, 400, "non-negative"},
		{"min_ram overflowing", "POST", "/v2/images", `{"min_ram": 99999999999999999999999}`, []string{json}, 400, "non-negative"},
		{"min_disk float", "POST", "/v2/images", `{"min_disk": 1.5}`, []string{json}, 400, "is not of type"},
		{"protected string", "POST", "/v2/images", `{"protected": "yes"}`, []string{json}, 400, "is not of type"},
		{"custom property not a string", "POST", "/v2/images", `{"hw_foo": 1}`, []string{json}, 400, "is not of type"},
		{"read-only status", "POST", "/v2/images", `{"status":"active"}`, []string{json}, 403, "Attribute 'status' is read-only."},
		{"read-only size", "POST", "/v2/images", `{"size": 5}`, []string{json}, 403, "read-only"},
		{"reserved key", "POST", "/v2/images", `{"os_glance_import_task": "x"}`, []string{json}, 403, "reserved"},
		{"invalid uuid id", "POST", "/v2/images", `{"id":"../../etc/passwd"}`, []string{json}, 400, "does not match"},
		{"duplicate id", "POST", "/v2/images", `{"id":"` + id + `"}`, []string{json}, 409, "already exists!"},
		{"public without admin role", "POST", "/v2/images", `{"visibility":"public"}`, []string{json}, 403, "publicize_image"},
		{"oversized JSON body", "POST", "/v2/images", `{"name":"` + strings.Repeat("x", 2<<20) + `"}`, []string{json}, 413, ""},
		{"unknown image", "GET", "/v2/images/00000000-0000-0000-0000-000000000000", "", nil, 404, "No image found with ID"},
		{"non-uuid id", "GET", "/v2/images/not-a-uuid", "", nil, 404, "No image found with ID not-a-uuid"},
		{"path trick id", "GET", "/v2/images/..%2f..%2fcatalog.db/file", "", nil, 404, "No image found"},
		{"unknown route", "GET", "/v2/nothing", "", nil, 404, "could not be found"},
		{"PATCH wrong media type", "PATCH", "/v2/images/" + id, `[]`, []string{json}, 415, "not supported"},
		{"PATCH read-only", "PATCH", "/v2/images/" + id, `[{"op":"replace","path":"/status","value":"queued"}]`, []string{patch}, 403, "Attribute 'status' is read-only."},
		{"PATCH checksum", "PATCH", "/v2/images/" + id, `[{"op":"replace","path":"/checksum","value":"0"}]`, []string{patch}, 403, "read-only"},
		{"PATCH id", "PATCH", "/v2/images/" + id, `[{"op":"replace","path":"/id","value":"` + id + `"}]`, []string{patch}, 403, "read-only"},
		{"PATCH unknown op", "PATCH", "/v2/images/" + id, `[{"op":"move","path":"/name","value":"x"}]`, []string{patch}, 400, "Invalid operation"},
		{"PATCH no value", "PATCH", "/v2/images/" + id, `[{"op":"replace","path":"/name"}]`, []string{patch}, 400, "value"},
		{"PATCH nested path", "PATCH", "/v2/images/" + id, `[{"op":"add","path":"/a/b","value":"x"}]`, []string{patch}, 400, "Nested"},
		{"PATCH bad pointer", "PATCH", "/v2/images/" + id, `[{"op":"add","path":"name","value":"x"}]`, []string{patch}, 400, "does not start with"},
		{"PATCH not an array", "PATCH", "/v2/images/" + id, `{"op":"add"}`, []string{patch}, 400, "JSON array"},
		{"PATCH remove core", "PATCH", "/v2/images/" + id, `[{"op":"remove","path":"/name"}]`, []string{patch}, 403, "base property"},
		{"PATCH remove missing", "PATCH", "/v2/images/" + id, `[{"op":"remove","path":"/nope"}]`, []string{patch}, 409, "does not exist"},
		{"PATCH later op fails", "PATCH", "/v2/images/" + id, `[{"op":"replace","path":"/name","value":"changed"},{"op":"replace","path":"/min_ram","value":-5}]`, []string{patch}, 400, "non-negative"},
		{"upload wrong media type", "PUT", "/v2/images/" + id + "/file", `{}`, []string{json}, 415, "not supported"},
		{"upload negative size header", "PUT", "/v2/images/" + id + "/file", `x`, []string{octet, "X-Openstack-Image-Size: -5"}, 400, "Invalid"},
		{"upload to unknown image", "PUT", "/v2/images/00000000-0000-0000-0000-000000000000/file", `x`, []string{octet}, 404, "No image found"},
		{"list bad limit", "GET", "/v2/images?limit=abc", "", nil, 400, "limit param must be an integer"},
		{"list negative limit", "GET", "/v2/images?limit=-1", "", nil, 400, "positive"},
		{"list bad sort_dir", "GET", "/v2/images?sort_key=name&sort_dir=up", "", nil, 400, "Invalid sort direction: up"},
		{"list bad sort_key", "GET", "/v2/images?sort_key=secret", "", nil, 400, "Invalid sort key"},
		{"list unknown marker", "GET", "/v2/images?marker=00000000-0000-0000-0000-000000000000", "", nil, 400, "No image found"},
		{"list bad size_min", "GET", "/v2/images?size_min=-3", "", nil, 400, "size_min"},
		{"list overflowing size_max", "GET", "/v2/images?size_max=99999999999999999999", "", nil, 400, "size_max"},
		{"list bad visibility", "GET", "/v2/images?visibility=secret", "", nil, 400, "visibility"},
		{"list bad protected", "GET", "/v2/images?protected=maybe", "", nil, 400, "protected"},
		{"import unknown method", "POST", "/v2/images/" + id + "/import", `{"method":{"name":"ftp"}}`, []string{json}, 400, "Import method"},
		{"import bad uri", "POST", "/v2/images/" + id + "/import", `{"method":{"name":"web-download","uri":"file:///etc/passwd"}}`, []string{json}, 400, "http or https"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, c.body, append(c.headers, "Accept: application/json")...)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			m := r.json(t)
			if m["code"] == nil || m["title"] == nil || !strings.Contains(m["message"].(string), c.message) {
				t.Fatalf("error body %s does not say %q", r.body, c.message)
			}
		})
	}
	if after := string(e.do("GET", "/v2/images/"+id, nil).body); after != before {
		t.Fatalf("bad input changed the image:\n%s\n%s", before, after)
	}
	if r := e.do("GET", "/v2/images/"+id+"/file", nil); string(r.body) != "original bytes" {
		t.Fatalf("bad input changed the bytes: %q", r.body)
	}
}

func TestErrorBodyIsHTMLUnlessJSONAccepted(t *testing.T) {
	e := newEnv(t, auth.None{})
	r := e.do("GET", "/v2/images/nope", nil, "Accept: */*")
	if r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(r.body), "<h1>404 Not Found</h1>") {
		t.Fatalf("%d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
}

func TestUploadTooLarge(t *testing.T) {
	e := newEnv(t, auth.None{}) // cap is 64 MiB in tests
	id := e.create(map[string]any{"name": "big"})
	r := e.upload(id, make([]byte, 65<<20), "Accept: application/json")
	if r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized upload: %d %s", r.status, r.body)
	}
	if im := e.show(id); im["status"] != "queued" || im["size"] != nil {
		t.Fatalf("after refused upload: %v", im)
	}
	if objs := storeObjects(t, e.dir); len(objs) != 0 {
		t.Fatalf("bytes left behind: %v", objs)
	}
}
