package glance

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"hangar/internal/auth"
)

// readFromRecorder is a ResponseWriter that, like net/http's, has ReadFrom,
// and remembers what it was handed.
type readFromRecorder struct {
	*httptest.ResponseRecorder
	src io.Reader
}

func (r *readFromRecorder) ReadFrom(src io.Reader) (int64, error) {
	r.src = src
	return io.Copy(r.ResponseRecorder, src)
}

// The download body of an image larger than the hot cache keeps must
// reach the ResponseWriter's ReadFrom as a bare *os.File (inside
// io.CopyN's LimitedReader): that is what net/http turns into sendfile(2).
// The e2e test counts the syscalls on a real server.
func TestDownloadHandsFileToReadFrom(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "sf"})
	data := bytes.Repeat([]byte("0123456789"), hotMaxBytes/10+1)
	e.upload(id, data)
	for _, rng := range []string{"", "bytes=2-5"} {
		rec := &readFromRecorder{ResponseRecorder: httptest.NewRecorder()}
		req := httptest.NewRequest("GET", "/v2/images/"+id+"/file", nil)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		e.api.Handler().ServeHTTP(rec, req)
		lr, ok := rec.src.(*io.LimitedReader)
		if !ok {
			t.Fatalf("range %q: ReadFrom got %T, want *io.LimitedReader", rng, rec.src)
		}
		if _, ok := lr.R.(*os.File); !ok {
			t.Fatalf("range %q: LimitedReader wraps %T, want *os.File", rng, lr.R)
		}
		want := map[string]string{"": string(data), "bytes=2-5": "2345"}[rng]
		if rec.Body.String() != want || (rng != "" && rec.Code != http.StatusPartialContent) {
			t.Fatalf("range %q: %d, %d bytes", rng, rec.Code, rec.Body.Len())
		}
	}
}

// Small images are served from memory after the first GET, with the same
// answers (whole, ranged) as from the file; a deactivation or a delete on
// this server is seen at once.
func TestSmallImagesFromMemory(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "small"})
	e.upload(id, []byte("0123456789"))
	for i := 0; i < 2; i++ { // the first fills the cache, the second reads it
		if r := e.do("GET", "/v2/images/"+id+"/file", nil); r.status != 200 || string(r.body) != "0123456789" ||
			r.header.Get("Content-MD5") == "" {
			t.Fatalf("GET %d: %d %q %v", i, r.status, r.body, r.header)
		}
		r := e.do("GET", "/v2/images/"+id+"/file", nil, "Range: bytes=2-5")
		if r.status != http.StatusPartialContent || string(r.body) != "2345" || r.header.Get("Content-Range") != "bytes 2-5/10" {
			t.Fatalf("ranged GET %d: %d %q", i, r.status, r.body)
		}
	}
	if r := e.do("GET", "/v2/images/"+id+"/file", nil, "Range: bytes=20-30"); r.status != http.StatusRequestedRangeNotSatisfiable {
		t.Fatalf("range past the end: %d", r.status)
	}
	e.do("POST", "/v2/images/"+id+"/actions/deactivate", nil)
	// auth.None is admin, who may still download; the record must be fresh.
	if r := e.do("GET", "/v2/images/"+id, nil); r.json(t)["status"] != "deactivated" {
		t.Fatalf("after deactivate: %s", r.body)
	}
	e.do("POST", "/v2/images/"+id+"/actions/reactivate", nil)
	if r := e.do("DELETE", "/v2/images/"+id, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d", r.status)
	}
	if r := e.do("GET", "/v2/images/"+id+"/file", nil); r.status != http.StatusNotFound {
		t.Fatalf("GET after delete: %d", r.status)
	}
}
