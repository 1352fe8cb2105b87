package imageio

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"hangar/internal/blkhash"
)

type patchRequest struct {
	Op     string       `json:"op"`
	Offset *json.Number `json:"offset"`
	Size   *json.Number `json:"size"`
	Flush  bool         `json:"flush"`
}

func nonNegative(name string, n *json.Number) (int64, error) {
	if n == nil {
		return 0, fail(http.StatusBadRequest, "Missing required value for '%s'", name)
	}
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || v < 0 {
		return 0, fail(http.StatusBadRequest, "Invalid value for '%s': %s", name, n)
	}
	return v, nil
}

func decodePatch(r *http.Request) (patchRequest, error) {
	var p patchRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, 4097))
	if err != nil || len(body) > 4096 {
		return p, fail(http.StatusBadRequest, "Invalid JSON message")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return p, fail(http.StatusBadRequest, "Invalid JSON message: %v", err)
	}
	if p.Op != "zero" && p.Op != "flush" {
		return p, fail(http.StatusBadRequest, "Unsupported value '%s' for 'op', expecting one of ['flush', 'zero']", p.Op)
	}
	return p, nil
}

func (a *API) patch(w http.ResponseWriter, r *http.Request) error {
	p, err := decodePatch(r)
	if err != nil {
		return err
	}
	var off, size int64
	if p.Op == "zero" {
		if off, err = nonNegative("offset", p.Offset); err != nil {
			return err
		}
		if size, err = nonNegative("size", p.Size); err != nil {
			return err
		}
	}
	l, err := a.acquire(r, "write")
	if err != nil {
		return err
	}
	defer l.Release()
	if p.Op == "zero" {
		if err := l.Zero(off, size); err != nil {
			return err
		}
		if !p.Flush {
			return nil
		}
	}
	return l.Flush(r.Context())
}

type extent struct {
	Start  int64 `json:"start"`
	Length int64 `json:"length"`
	Zero   bool  `json:"zero"`
	Hole   bool  `json:"hole"`
}

func (a *API) extents(w http.ResponseWriter, r *http.Request) error {
	switch r.URL.Query().Get("context") {
	case "", "zero":
	case "dirty":
		return fail(http.StatusNotFound, "Ticket does not support dirty extents")
	default:
		return fail(http.StatusBadRequest, "Invalid context %q, expecting zero or dirty", r.URL.Query().Get("context"))
	}
	l, err := a.acquire(r, "read")
	if err != nil {
		return err
	}
	defer l.Release()
	exts, err := l.Extents(r.Context())
	if err != nil {
		return err
	}
	out := make([]extent, len(exts))
	for i, e := range exts {
		out[i] = extent{Start: e.Offset, Length: e.Length, Zero: e.Zero, Hole: e.Zero}
	}
	return writeJSON(w, out)
}

func (a *API) algorithms(w http.ResponseWriter, r *http.Request) error {
	l, err := a.acquire(r, "read")
	if err != nil {
		return err
	}
	l.Release()
	return writeJSON(w, map[string][]string{"algorithms": {blkhash.Algorithm}})
}

func (a *API) checksum(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if alg := q.Get("algorithm"); alg != "" && alg != blkhash.Algorithm {
		return fail(http.StatusBadRequest, "Unsupported algorithm %q, expecting one of ['%s']", alg, blkhash.Algorithm)
	}
	bs := blkhash.BlockSize
	if s := q.Get("block_size"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 4096 || n > 64<<20 || n%4096 != 0 {
			return fail(http.StatusBadRequest, "Invalid block_size %q: a multiple of 4096 between 4 KiB and 64 MiB", s)
		}
		bs = n
	}
	l, err := a.acquire(r, "read")
	if err != nil {
		return err
	}
	defer l.Release()
	sum, err := l.Checksum(r.Context(), bs)
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"algorithm": blkhash.Algorithm, "block_size": bs, "checksum": sum})
}
