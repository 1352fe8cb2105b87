// Package imageio serves ovirt-imageio's transfer API over Hangar's
// transfers, so imageio's clients (its Python client, ovirt-img, virt-v2v)
// work unchanged: the data path at /images/{ticket} (OPTIONS, ranged GET by
// sendfile, PUT at offsets, PATCH zero/flush, extents, checksums) and the
// ticket control API at /tickets/{id}, which is only ever served on a
// local unix socket. Wire details follow the captures in
// shared/reference/imageio-api-examples.md.
package imageio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"hangar/internal/catalog"
	"hangar/internal/storage"
	"hangar/internal/transfer"
)

// Version is what GET /info/ reports: the imageio API level Hangar speaks.
const Version = "2.5.1"

// Config is what the data path advertises.
type Config struct {
	// UnixSocket is the data socket advertised in OPTIONS; local clients
	// switch to it. Empty advertises none.
	UnixSocket string
}

// API serves the imageio protocol over a transfer manager.
type API struct {
	m   *transfer.Manager
	log *slog.Logger
	cfg Config
}

// New returns the API.
func New(m *transfer.Manager, log *slog.Logger, cfg Config) *API {
	return &API{m: m, log: log, cfg: cfg}
}

// httpError is an error with imageio's status and text.
type httpError struct {
	status int
	msg    string
	header http.Header
}

func (e *httpError) Error() string { return e.msg }

func fail(status int, format string, args ...any) *httpError {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// writeError is the one place errors become imageio responses: a
// text/plain body ending in a newline; 403 also closes the connection, as
// imageio does.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error, size int64) {
	var he *httpError
	switch {
	case errors.As(err, &he):
	case errors.Is(err, transfer.ErrForbidden):
		he = fail(http.StatusForbidden, "You are not allowed to access this resource: %s", trimSentinel(err, transfer.ErrForbidden))
		w.Header().Set("Connection", "close")
	case errors.Is(err, storage.ErrInvalidRange):
		he = fail(http.StatusRequestedRangeNotSatisfiable, "Requested range out of allowed range")
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size))
		w.Header().Set("Connection", "close")
	case errors.Is(err, transfer.ErrInvalid):
		he = fail(http.StatusBadRequest, "%s", trimSentinel(err, transfer.ErrInvalid))
	case errors.Is(err, catalog.ErrConflict):
		he = fail(http.StatusConflict, "%v", err)
	case errors.Is(err, catalog.ErrNotFound):
		he = fail(http.StatusNotFound, "%v", err)
	case errors.Is(err, storage.ErrUnavailable):
		a.log.Error("imageio request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		he = fail(http.StatusServiceUnavailable, "Image store unavailable, try again later")
	case errors.Is(err, context.Canceled):
		return // the client is gone
	default:
		a.log.Error("imageio request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		he = fail(http.StatusInternalServerError, "Internal server error")
	}
	for k, v := range he.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	w.WriteHeader(he.status)
	fmt.Fprintln(w, he.msg)
}

// trimSentinel drops the ": sentinel" suffix %w added.
func trimSentinel(err, sentinel error) string {
	s := err.Error()
	if suffix := ": " + sentinel.Error(); len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)]
	}
	return s
}

type handler func(w http.ResponseWriter, r *http.Request) error

func (a *API) wrap(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "hangar (imageio/"+Version+")")
		if err := h(w, r); err != nil {
			a.writeError(w, r, err, sizeOf(r))
		}
	}
}

// sizeOf is stashed by handlers that know the image size, for 416 answers.
func sizeOf(r *http.Request) int64 {
	if v, ok := r.Context().Value(sizeKey{}).(*int64); ok {
		return *v
	}
	return 0
}

type sizeKey struct{}

// DataHandler serves /images/… and /info/ (public listener and data socket).
func (a *API) DataHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("OPTIONS /images/{ticket}", a.wrap(a.options))
	mux.HandleFunc("GET /images/{ticket}", a.wrap(a.get))
	mux.HandleFunc("HEAD /images/{ticket}", a.wrap(methodNotAllowed))
	mux.HandleFunc("PUT /images/{ticket}", a.wrap(a.put))
	mux.HandleFunc("PATCH /images/{ticket}", a.wrap(a.patch))
	mux.HandleFunc("GET /images/{ticket}/extents", a.wrap(a.extents))
	mux.HandleFunc("GET /images/{ticket}/checksum", a.wrap(a.checksum))
	mux.HandleFunc("GET /images/{ticket}/checksum/algorithms", a.wrap(a.algorithms))
	mux.HandleFunc("GET /info/", a.wrap(func(w http.ResponseWriter, r *http.Request) error {
		return writeJSON(w, map[string]string{"version": Version})
	}))
	return withSize(mux)
}

// withSize gives handlers a place to record the image size for errors.
func withSize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var size int64
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sizeKey{}, &size)))
	})
}

func setSize(r *http.Request, size int64) {
	if p, ok := r.Context().Value(sizeKey{}).(*int64); ok {
		*p = size
	}
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request) error {
	return fail(http.StatusMethodNotAllowed, "Invalid method %s, allowed methods: OPTIONS,GET,PUT,PATCH", r.Method)
}
