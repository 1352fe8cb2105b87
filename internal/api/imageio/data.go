package imageio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"hangar/internal/httprange"
	"hangar/internal/tcpcork"
	"hangar/internal/transfer"
)

var (
	writeFeatures = []string{"checksum", "extents", "flush", "zero"}
	readFeatures  = []string{"checksum", "extents"}
)

func writeJSON(w http.ResponseWriter, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(body)
	return err
}

// acquire admits the request on its ticket and records the image size.
func (a *API) acquire(r *http.Request, op string) (*transfer.Lease, error) {
	l, err := a.m.Acquire(r.Context(), r.PathValue("ticket"), op)
	if err != nil {
		return nil, err
	}
	setSize(r, l.Transfer().Size)
	return l, nil
}

func (a *API) options(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Allow-Headers", "*")
	w.Header().Set("Access-Control-Allow-Methods", "OPTIONS,GET,PUT")
	w.Header().Set("Access-Control-Max-Age", "86400")
	body := map[string]any{"features": writeFeatures}
	if a.cfg.UnixSocket != "" {
		body["unix_socket"] = a.cfg.UnixSocket
	}
	if r.PathValue("ticket") == "*" { // server capabilities, no ticket
		w.Header().Set("Allow", "OPTIONS,GET,PUT,PATCH")
		return writeJSON(w, body)
	}
	l, err := a.acquire(r, "read")
	if err != nil {
		return err
	}
	defer l.Release()
	cfg := a.m.Config()
	body["max_readers"], body["max_writers"] = cfg.MaxReaders, cfg.MaxWriters
	if l.Transfer().Can("write") {
		w.Header().Set("Allow", "OPTIONS,GET,PUT,PATCH")
	} else {
		w.Header().Set("Allow", "OPTIONS,GET")
		body["features"] = readFeatures
	}
	return writeJSON(w, body)
}

// readRange resolves imageio's Range forms: a-b and a- (suffix ranges and
// several ranges are refused with 416, as imageio does).
func readRange(r *http.Request, size int64) (int64, int64, bool, error) {
	h := r.Header.Get("Range")
	if h == "" {
		return 0, size, false, nil
	}
	if spec, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes="); ok && strings.HasPrefix(strings.TrimSpace(spec), "-") {
		return 0, 0, false, fail(http.StatusRequestedRangeNotSatisfiable, "suffix-byte-range-spec not supported yet")
	}
	rg, err := httprange.Parse(h, size)
	switch {
	case errors.Is(err, httprange.ErrUnsatisfiable):
		e := fail(http.StatusRequestedRangeNotSatisfiable, "Requested range out of allowed range")
		e.header = http.Header{"Content-Range": {fmt.Sprintf("bytes */%d", size)}}
		return 0, 0, false, e
	case err != nil:
		return 0, 0, false, fail(http.StatusRequestedRangeNotSatisfiable, "Cannot satisfy range '%s', invalid range or multiple ranges", h)
	}
	return rg.Start, rg.Length, true, nil
}

func (a *API) get(w http.ResponseWriter, r *http.Request) error {
	l, err := a.acquire(r, "read")
	if err != nil {
		return err
	}
	defer l.Release()
	size := l.Transfer().Size
	off, n, partial, err := readRange(r, size)
	if err != nil {
		return err
	}
	body, err := l.OpenRange(r.Context(), off, n)
	if err != nil {
		return err
	}
	defer body.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", "attachment")
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	status := http.StatusOK
	if partial {
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, size))
		status = http.StatusPartialContent
	}
	defer tcpcork.Cork(r.Context())() // full segments while sendfile runs
	w.WriteHeader(status)
	// For a read ticket body is a bare *os.File: sendfile(2), see glance.
	if _, err := io.CopyN(w, body, n); err != nil {
		a.log.Debug("imageio read ended early", "err", err)
	}
	return nil
}

// contentRange reads "bytes a-b/*" (or "/size"); without the header the
// write starts at 0. The range must agree with Content-Length.
func contentRange(r *http.Request) (int64, error) {
	h := r.Header.Get("Content-Range")
	if h == "" {
		return 0, nil
	}
	spec, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes ")
	rng, _, ok2 := strings.Cut(spec, "/")
	first, last, ok3 := strings.Cut(rng, "-")
	start, err1 := strconv.ParseInt(first, 10, 64)
	end, err2 := strconv.ParseInt(last, 10, 64)
	if !ok || !ok2 || !ok3 || err1 != nil || err2 != nil || start < 0 || end < start {
		return 0, fail(http.StatusBadRequest, "Invalid Content-Range header: %q", h)
	}
	if end-start+1 != r.ContentLength {
		return 0, fail(http.StatusBadRequest, "Content-Range %q does not match Content-Length %d", h, r.ContentLength)
	}
	return start, nil
}

func flushParam(r *http.Request) (bool, error) {
	switch v := r.URL.Query().Get("flush"); v {
	case "", "y":
		return true, nil
	case "n":
		return false, nil
	default:
		return false, fail(http.StatusBadRequest, "Invalid flush value %q, expecting y or n", v)
	}
}

func (a *API) put(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength < 0 {
		return fail(http.StatusBadRequest, "Content-Length header is required")
	}
	off, err := contentRange(r)
	if err != nil {
		return err
	}
	flush, err := flushParam(r)
	if err != nil {
		return err
	}
	l, err := a.acquire(r, "write")
	if err != nil {
		return err
	}
	defer l.Release()
	if _, err := l.WriteFrom(r.Body, off, r.ContentLength); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fail(http.StatusBadRequest, "Body ended before Content-Length %d bytes arrived", r.ContentLength)
		}
		return err
	}
	if flush {
		if err := l.Flush(r.Context()); err != nil {
			return err
		}
	}
	return nil
}
