package imageio

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"hangar/internal/catalog"
	"hangar/internal/transfer"
)

// URLScheme names a Hangar image in a ticket's url: "hangar:IMAGE-ID".
// Tickets always name a catalog image, never a path on the server.
const URLScheme = "hangar:"

// ticket is imageio's ticket JSON.
type ticket struct {
	UUID              *string      `json:"uuid"`
	Size              *json.Number `json:"size"`
	Ops               []string     `json:"ops"`
	Timeout           *json.Number `json:"timeout"`
	URL               *string      `json:"url"`
	InactivityTimeout *json.Number `json:"inactivity_timeout"`
	TransferID        string       `json:"transfer_id"`
	Sparse            *bool        `json:"sparse"`
}

// ControlHandler serves /tickets/… It must only be put on a local unix
// socket: whoever reaches it can grant access to any image.
func (a *API) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /tickets/{id}", a.wrap(a.putTicket))
	mux.HandleFunc("GET /tickets/{id}", a.wrap(a.getTicket))
	mux.HandleFunc("PATCH /tickets/{id}", a.wrap(a.patchTicket))
	mux.HandleFunc("DELETE /tickets/{id}", a.wrap(a.deleteTicket))
	return mux
}

func invalidTicket(format string, args ...any) *httpError {
	return fail(http.StatusBadRequest, "Invalid ticket: "+format, args...)
}

func decodeTicket(r *http.Request) (ticket, error) {
	var t ticket
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		return t, invalidTicket("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&t); err != nil {
		return t, invalidTicket("%v", err)
	}
	for name, missing := range map[string]bool{"uuid": t.UUID == nil, "size": t.Size == nil,
		"ops": t.Ops == nil, "timeout": t.Timeout == nil, "url": t.URL == nil} {
		if missing {
			return t, invalidTicket("Required ticket parameter is missing: %s", name)
		}
	}
	return t, nil
}

func (a *API) putTicket(w http.ResponseWriter, r *http.Request) error {
	t, err := decodeTicket(r)
	if err != nil {
		return err
	}
	imageID, ok := strings.CutPrefix(*t.URL, URLScheme)
	if !ok || imageID == "" {
		return invalidTicket("Unsupported url %q, expecting %sIMAGE-ID", *t.URL, URLScheme)
	}
	size, err1 := t.Size.Int64()
	timeout, err2 := t.Timeout.Int64()
	var inactivity int64
	var err3 error
	if t.InactivityTimeout != nil {
		inactivity, err3 = t.InactivityTimeout.Int64()
	}
	if err1 != nil || err2 != nil || err3 != nil || size < 0 || timeout < 0 || inactivity < 0 {
		return invalidTicket("size and timeouts must be non-negative integers")
	}
	if *t.UUID == "" || *t.UUID != r.PathValue("id") {
		return invalidTicket("uuid %q does not match the ticket id in the path", *t.UUID)
	}
	tr := &catalog.Transfer{ID: *t.UUID, ImageID: imageID, Ops: t.Ops, Size: size,
		Timeout: timeout, InactivityTimeout: inactivity}
	err = a.m.Create(r.Context(), tr)
	switch {
	case errors.Is(err, catalog.ErrExists):
		return fail(http.StatusConflict, "Ticket %s exists already", tr.ID)
	case errors.Is(err, catalog.ErrNotFound):
		return invalidTicket("No such image %s", imageID)
	}
	return err
}

func (a *API) getTicket(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	t, st, err := a.m.Get(r.Context(), id)
	if errors.Is(err, catalog.ErrNotFound) {
		return fail(http.StatusNotFound, "No such ticket '%s'", id)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{
		"active":             st.Active > 0,
		"canceled":           t.Phase == catalog.PhaseCancelled,
		"connections":        st.Active,
		"expires":            t.ExpiresAt.Unix(),
		"idle_time":          int64(st.IdleTime / time.Second),
		"inactivity_timeout": t.InactivityTimeout,
		"ops":                t.Ops,
		"size":               t.Size,
		"sparse":             true,
		"dirty":              false,
		"timeout":            t.Timeout,
		"url":                URLScheme + t.ImageID,
		"uuid":               t.ID,
		"transferred":        t.Transferred,
	})
}

func (a *API) patchTicket(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Timeout *int64 `json:"timeout"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&body); err != nil || body.Timeout == nil {
		return fail(http.StatusBadRequest, "Invalid patch: expecting {\"timeout\": N}")
	}
	_, err := a.m.Extend(r.Context(), r.PathValue("id"), *body.Timeout)
	if errors.Is(err, catalog.ErrNotFound) {
		return fail(http.StatusNotFound, "No such ticket '%s'", r.PathValue("id"))
	}
	return err
}

// deleteTicket ends a ticket, idempotently as imageio does. A write ticket
// that is still open is finalized: the tool driving imageio removes the
// ticket when its upload is complete, and Hangar then publishes the image
// (to throw an upload away, delete the image or cancel the transfer
// through the Image API instead).
func (a *API) deleteTicket(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	t, _, err := a.m.Get(r.Context(), id)
	if errors.Is(err, catalog.ErrNotFound) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if err != nil {
		return err
	}
	if t.Phase == catalog.PhaseTransferring {
		if _, _, err := a.m.Finalize(r.Context(), id); err != nil && !errors.Is(err, transfer.ErrForbidden) {
			return err
		}
	}
	if err := a.m.Cancel(r.Context(), id, true); err != nil && !errors.Is(err, catalog.ErrNotFound) {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
