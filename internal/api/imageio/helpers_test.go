package imageio

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"hangar/internal/catalog"
	"hangar/internal/storage/localfs"
	"hangar/internal/testenv"
	"hangar/internal/transfer"
)

type env struct {
	t       *testing.T
	cat     catalog.Catalog
	store   *localfs.Store
	m       *transfer.Manager
	data    string // data path base URL
	control http.Handler
	dir     string
	st      *testenv.Stack
}

func newEnv(t *testing.T, cfg transfer.Config) *env {
	t.Helper()
	st := testenv.New(t, cfg)
	api := New(st.Transfers, st.Log, Config{})
	srv := httptest.NewServer(api.DataHandler())
	t.Cleanup(srv.Close)
	return &env{t: t, cat: st.Catalog, store: st.Store, m: st.Transfers, data: srv.URL, control: api.ControlHandler(), dir: st.Dir, st: st}
}

// image creates a queued image and returns its id.
func (e *env) image() string {
	e.t.Helper()
	id := uuid.NewString()
	if err := e.cat.CreateImage(context.Background(), &catalog.Image{ID: id, Visibility: catalog.Shared, Status: catalog.StatusQueued}); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// ticket opens a transfer and returns its data URL.
func (e *env) ticket(imageID string, size int64, ops ...string) (string, *catalog.Transfer) {
	e.t.Helper()
	tr := &catalog.Transfer{ImageID: imageID, Ops: ops, Size: size}
	if err := e.m.Create(context.Background(), tr); err != nil {
		e.t.Fatal(err)
	}
	return e.data + "/images/" + tr.ID, tr
}

type resp struct {
	status int
	header http.Header
	body   []byte
	close  bool // the server said Connection: close
}

func do(t *testing.T, method, url string, body any, headers ...string) resp {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b, res.Close}
}

// controlDo calls the control handler in-process (it is only ever on a
// unix socket; the server tests cover the socket itself).
func (e *env) controlDo(method, path, body string) resp {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.control.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	return resp{rec.Code, rec.Header(), rec.Body.Bytes(), false}
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return v
}
