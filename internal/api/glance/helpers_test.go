package glance

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"hangar/internal/api/imageio"
	"hangar/internal/auth"
	"hangar/internal/testenv"
	"hangar/internal/transfer"
)

type testEnv struct {
	t   *testing.T
	api *API
	url string
	dir string
	st  *testenv.Stack
}

func newEnv(t *testing.T, authn auth.Authenticator) *testEnv {
	t.Helper()
	st := testenv.New(t, transfer.Config{})
	api := New(st.Catalog, st.Store, st.Transfers, authn, st.Log, Config{MaxImageSize: 64 << 20})
	// As the server routes them: the transfer data path beside the API.
	mux := http.NewServeMux()
	mux.Handle("/images/", imageio.New(st.Transfers, st.Log, imageio.Config{}).DataHandler())
	mux.Handle("/", api.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); api.Close() })
	return &testEnv{t: t, api: api, url: srv.URL, dir: st.Dir, st: st}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.body)
	}
	return m
}

// do sends a request; headers are "Key: value" strings.
func (e *testEnv) do(method, path string, body any, headers ...string) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		js, _ := json.Marshal(b)
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

// create makes an image and returns its id.
func (e *testEnv) create(body map[string]any, headers ...string) string {
	e.t.Helper()
	r := e.do("POST", "/v2/images", body, append(headers, "Content-Type: application/json")...)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create: %d %s", r.status, r.body)
	}
	return r.json(e.t)["id"].(string)
}

func (e *testEnv) upload(id string, data []byte, headers ...string) resp {
	e.t.Helper()
	return e.do("PUT", "/v2/images/"+id+"/file", data, append(headers, "Content-Type: application/octet-stream")...)
}

func (e *testEnv) show(id string, headers ...string) map[string]any {
	e.t.Helper()
	r := e.do("GET", "/v2/images/"+id, nil, headers...)
	if r.status != http.StatusOK {
		e.t.Fatalf("show %s: %d %s", id, r.status, r.body)
	}
	return r.json(e.t)
}
