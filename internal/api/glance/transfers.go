package glance

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"hangar/internal/auth"
	"hangar/internal/blkhash"
	"hangar/internal/catalog"
	"hangar/internal/transfer"
)

// Transfers on the Image API: a write transfer fills a queued image by
// random-access writes through the imageio data path at transfer_url; a
// read transfer reads an active one. The transfer id is the ticket.

type transferRequest struct {
	Ops               []string `json:"ops"`
	Size              int64    `json:"size"`
	Timeout           int64    `json:"timeout"`
	InactivityTimeout int64    `json:"inactivity_timeout"`
}

// transferRecord renders a transfer; block, when set, is imageio's block
// checksum of what a finalized write transfer received, for the client to
// compare with its own.
func transferRecord(r *http.Request, t *catalog.Transfer, st transfer.Stats, block string) json.RawMessage {
	var o orderedJSON
	o.add("id", t.ID)
	o.add("image_id", t.ImageID)
	o.add("ops", t.Ops)
	o.add("size", t.Size)
	o.add("transfer_url", baseURL(r)+"/images/"+t.ID)
	o.add("expires_at", t.ExpiresAt.UTC().Format(time.RFC3339))
	o.add("timeout", t.Timeout)
	o.add("inactivity_timeout", t.InactivityTimeout)
	o.add("phase", t.Phase)
	o.add("transferred", max(t.Transferred, st.Transferred))
	o.add("connections", st.Active)
	done := t.Done
	if done == nil {
		done = []catalog.Range{}
	}
	o.add("done_ranges", done)
	o.add("created_at", t.CreatedAt.UTC().Format(timeFormat))
	o.add("updated_at", t.UpdatedAt.UTC().Format(timeFormat))
	if block != "" {
		o.add("block_checksum", map[string]any{"algorithm": blkhash.Algorithm, "block_size": blkhash.BlockSize, "checksum": block})
	}
	return o.bytes()
}

func (a *API) needTransfers() error {
	if a.transfers == nil {
		return errorf(http.StatusNotImplemented, "Transfers are not enabled on this server.")
	}
	return nil
}

func (a *API) createTransfer(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	if err := a.needTransfers(); err != nil {
		return err
	}
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	var req transferRequest
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	imageID := r.PathValue("id")
	t := &catalog.Transfer{ImageID: imageID, Ops: req.Ops, Size: req.Size, Timeout: req.Timeout, InactivityTimeout: req.InactivityTimeout}
	if t.Can("write") {
		_, err = a.loadOwnImage(r.Context(), id, imageID)
	} else {
		_, err = a.loadImage(r.Context(), id, imageID)
	}
	if err != nil {
		return err
	}
	if err := a.transfers.Create(r.Context(), t); err != nil {
		return transferError(err)
	}
	w.Header().Set("Location", baseURL(r)+"/v2/images/"+imageID+"/transfers/"+t.ID)
	return writeJSON(w, http.StatusCreated, transferRecord(r, t, transfer.Stats{}, ""))
}

func transferError(err error) error {
	switch {
	case errors.Is(err, transfer.ErrInvalid):
		return errorf(http.StatusBadRequest, "Invalid transfer: %v", err)
	case errors.Is(err, catalog.ErrConflict):
		return errorf(http.StatusConflict, "%v", err)
	case errors.Is(err, catalog.ErrNotFound), errors.Is(err, transfer.ErrForbidden):
		return errorf(http.StatusNotFound, "Transfer not found.")
	}
	return err
}

// loadTransfer returns a transfer of an image the caller owns.
func (a *API) loadTransfer(r *http.Request, id auth.Identity) (*catalog.Transfer, transfer.Stats, error) {
	if err := a.needTransfers(); err != nil {
		return nil, transfer.Stats{}, err
	}
	if _, err := a.loadOwnImage(r.Context(), id, r.PathValue("id")); err != nil {
		return nil, transfer.Stats{}, err
	}
	t, st, err := a.transfers.Get(r.Context(), r.PathValue("tid"))
	if err == nil && t.ImageID != r.PathValue("id") {
		err = catalog.ErrNotFound
	}
	if err != nil {
		return nil, st, transferError(err)
	}
	return t, st, nil
}

func (a *API) showTransfer(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	t, st, err := a.loadTransfer(r, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, transferRecord(r, t, st, ""))
}

func (a *API) finalizeTransfer(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	if _, _, err := a.loadTransfer(r, id); err != nil {
		return err
	}
	t, block, err := a.transfers.Finalize(r.Context(), r.PathValue("tid"))
	if err != nil {
		return transferError(err)
	}
	return writeJSON(w, http.StatusOK, transferRecord(r, t, transfer.Stats{}, block))
}

func (a *API) cancelTransfer(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	if _, _, err := a.loadTransfer(r, id); err != nil {
		return err
	}
	if err := a.transfers.Cancel(r.Context(), r.PathValue("tid"), false); err != nil {
		return transferError(err)
	}
	return noContent(w)
}

func (a *API) listTransfers(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	if err := a.needTransfers(); err != nil {
		return err
	}
	if _, err := a.loadOwnImage(r.Context(), id, r.PathValue("id")); err != nil {
		return err
	}
	ts, err := a.cat.ListTransfers(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]json.RawMessage, 0, len(ts))
	for _, t := range ts {
		_, st, _ := a.transfers.Get(r.Context(), t.ID)
		out = append(out, transferRecord(r, t, st, ""))
	}
	var o orderedJSON
	o.add("transfers", out)
	return writeJSON(w, http.StatusOK, o.bytes())
}
