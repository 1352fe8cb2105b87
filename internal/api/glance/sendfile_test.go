package glance

import (
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

// The download body must reach the ResponseWriter's ReadFrom as a bare
// *os.File (inside io.CopyN's LimitedReader): that is what net/http turns
// into sendfile(2). The e2e test counts the syscalls on a real server.
func TestDownloadHandsFileToReadFrom(t *testing.T) {
	e := newEnv(t, auth.None{})
	id := e.create(map[string]any{"name": "sf"})
	e.upload(id, []byte("0123456789"))
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
		want := map[string]string{"": "0123456789", "bytes=2-5": "2345"}[rng]
		if rec.Body.String() != want || (rng != "" && rec.Code != http.StatusPartialContent) {
			t.Fatalf("range %q: %d %q", rng, rec.Code, rec.Body.String())
		}
	}
}
