// Package glance serves the OpenStack Image API v2, wire-compatible with
// Glance (Zed): the captured exchanges in shared/reference are the truth for
// status codes, headers and JSON shapes. It is a thin adapter: image records
// live in a catalog.Catalog, image bytes in a storage.Store.
package glance

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"

	"github.com/google/uuid"

	"hangar/internal/auth"
	"hangar/internal/catalog"
	"hangar/internal/storage"
	"hangar/internal/transfer"
)

// Config tunes the API.
type Config struct {
	// MaxImageSize caps one image's bytes (Glance's image_size_cap).
	MaxImageSize int64
	// ImportClient fetches web-download URIs; nil means a default client.
	ImportClient *http.Client
}

// DefaultMaxImageSize is Glance's default image_size_cap: 1 TiB.
const DefaultMaxImageSize = 1 << 40

// API is the Image API handler set.
type API struct {
	cat   catalog.Catalog
	store storage.Store
	authn auth.Authenticator
	log   *slog.Logger
	cfg   Config

	transfers *transfer.Manager // nil: no transfer endpoints
	hot       *hotCache

	// Background imports run under ctx and are waited for by Close.
	ctx    context.Context
	cancel context.CancelFunc
	tasks  sync.WaitGroup
}

// New returns the API over cat and store; transfers may be nil.
func New(cat catalog.Catalog, store storage.Store, transfers *transfer.Manager, authn auth.Authenticator, log *slog.Logger, cfg Config) *API {
	if cfg.MaxImageSize <= 0 {
		cfg.MaxImageSize = DefaultMaxImageSize
	}
	if cfg.ImportClient == nil {
		cfg.ImportClient = &http.Client{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &API{cat: cat, store: store, transfers: transfers, authn: authn, log: log, cfg: cfg, ctx: ctx, cancel: cancel,
		hot: newHotCache()}
}

// Close stops background imports and waits for them; interrupted imports
// are put back by Recover on the next start.
func (a *API) Close() {
	a.cancel()
	a.tasks.Wait()
}

// handlerFunc is an authenticated endpoint; a returned error becomes
// Glance's error response.
type handlerFunc func(w http.ResponseWriter, r *http.Request, id auth.Identity) error

// Handler returns the routes of the Image API.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", a.versions(http.StatusMultipleChoices))
	mux.HandleFunc("GET /versions", a.versions(http.StatusOK))
	mux.HandleFunc("GET /v2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, baseURL(r)+"/v2/", http.StatusFound)
	})
	routes := map[string]handlerFunc{
		"GET /v2/schemas/{name}":                        a.schema,
		"GET /v2/schemas/{name}/{sub}":                  a.schema,
		"GET /v2/info/import":                           a.infoImport,
		"GET /v2/info/stores":                           a.infoStores,
		"POST /v2/images":                               a.createImage,
		"GET /v2/images":                                a.listImages,
		"GET /v2/images/{id}":                           a.showImage,
		"PATCH /v2/images/{id}":                         a.updateImage,
		"DELETE /v2/images/{id}":                        a.deleteImage,
		"PUT /v2/images/{id}/file":                      a.upload,
		"GET /v2/images/{id}/file":                      a.download,
		"HEAD /v2/images/{id}/file":                     a.methodNotAllowed("GET, PUT"),
		"PUT /v2/images/{id}/stage":                     a.stage,
		"POST /v2/images/{id}/import":                   a.importImage,
		"PUT /v2/images/{id}/tags/{tag}":                a.addTag,
		"DELETE /v2/images/{id}/tags/{tag}":             a.deleteTag,
		"POST /v2/images/{id}/actions/deactivate":       a.deactivate,
		"POST /v2/images/{id}/actions/reactivate":       a.reactivate,
		"GET /v2/images/{id}/members":                   a.listMembers,
		"POST /v2/images/{id}/members":                  a.addMember,
		"GET /v2/images/{id}/members/{member}":          a.showMember,
		"PUT /v2/images/{id}/members/{member}":          a.updateMember,
		"DELETE /v2/images/{id}/members/{member}":       a.deleteMember,
		"POST /v2/images/{id}/transfers":                a.createTransfer,
		"GET /v2/images/{id}/transfers":                 a.listTransfers,
		"GET /v2/images/{id}/transfers/{tid}":           a.showTransfer,
		"POST /v2/images/{id}/transfers/{tid}/finalize": a.finalizeTransfer,
		"DELETE /v2/images/{id}/transfers/{tid}":        a.cancelTransfer,
	}
	for pattern, h := range routes {
		mux.Handle(pattern, a.wrap(h))
	}
	return a.fallback(mux)
}

// wrap authenticates, stamps the request id and renders returned errors.
func (a *API) wrap(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Openstack-Request-Id", "req-"+uuid.NewString())
		id, err := a.authn.Authenticate(r)
		if err == nil {
			err = h(w, r, id)
		}
		if err != nil {
			writeError(w, r, a.log, err)
		}
	})
}

// fallback renders the mux's own 404 and 405 answers in Glance's format.
func (a *API) fallback(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, pattern := mux.Handler(r); pattern == "" {
			rec := &statusRecorder{header: http.Header{}}
			h.ServeHTTP(rec, r)
			e := errorf(http.StatusNotFound, "The resource could not be found.")
			if rec.status == http.StatusMethodNotAllowed {
				e = &Error{Status: rec.status, Message: "The server could not comply with the request since it is either malformed or otherwise incorrect.",
					Header: http.Header{"Allow": rec.header["Allow"]}}
			}
			writeError(w, r, a.log, e)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (a *API) methodNotAllowed(allow string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, _ auth.Identity) error {
		w.Header().Set("Allow", allow)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return nil
	}
}

// statusRecorder captures what the mux's default handlers answer.
type statusRecorder struct {
	header http.Header
	status int
}

func (s *statusRecorder) Header() http.Header         { return s.header }
func (s *statusRecorder) Write(p []byte) (int, error) { return len(p), nil }
func (s *statusRecorder) WriteHeader(code int)        { s.status = code }

func writeJSON(w http.ResponseWriter, status int, v any) error {
	var body []byte
	if raw, ok := v.(json.RawMessage); ok {
		body = raw
	} else {
		var err error
		if body, err = marshal(v); err != nil {
			return err
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err := w.Write(body)
	return err
}

// noContent answers 204 the way Glance does (with its text/html quirk).
func noContent(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// baseURL is scheme://host of the request, for the absolute links Glance
// puts in Location and the versions document.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
