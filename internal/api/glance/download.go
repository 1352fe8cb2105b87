package glance

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"hangar/internal/auth"
	"hangar/internal/catalog"
	"hangar/internal/httprange"
	"hangar/internal/storage"
	"hangar/internal/tcpcork"
)

func (a *API) download(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	e, err := a.hotImage(r.Context(), r.PathValue("id"))
	var im *catalog.Image
	if e != nil {
		im = e.im
	}
	if err := a.visible(r.Context(), id, r.PathValue("id"), im, err); err != nil {
		return err
	}
	if im.Status == catalog.StatusDeactivated && !id.Admin {
		return errorf(http.StatusForbidden, "The requested image has been deactivated. Image data download is forbidden.")
	}
	if !hasData(im) || im.Size == nil { // Glance answers 204 until data is there
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	size := *im.Size
	start, length, err := requestedRange(r, size)
	if err != nil {
		return err
	}
	if e.data != nil {
		a.downloadHeaders(w, r, im, start, length)
		w.Write(e.data[start : start+length])
		return nil
	}
	body, err := a.openData(r, im.ID, start)
	if err != nil {
		return err
	}
	defer body.Close()
	defer tcpcork.Cork(r.Context())() // full segments while sendfile runs
	a.downloadHeaders(w, r, im, start, length)
	// A bare *os.File (inside io.CopyN's LimitedReader) reaches the socket
	// through http.response.ReadFrom → net.TCPConn.ReadFrom → sendfile(2).
	// Wrapping it, or w, in anything without ReadFrom turns that into a copy.
	if _, err := io.CopyN(w, body, length); err != nil {
		a.log.Debug("download ended early", "image", im.ID, "err", err)
	}
	return nil
}

func (a *API) downloadHeaders(w http.ResponseWriter, r *http.Request, im *catalog.Image, start, length int64) {
	size := *im.Size
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	if im.Checksum != nil {
		h.Set("Content-MD5", *im.Checksum)
	}
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	status := http.StatusOK
	if r.Header.Get("Range") != "" {
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, start+length-1, size))
		status = http.StatusPartialContent
	}
	w.WriteHeader(status)
}

// requestedRange resolves the Range header: the whole image without one.
func requestedRange(r *http.Request, size int64) (int64, int64, error) {
	header := r.Header.Get("Range")
	if header == "" {
		return 0, size, nil
	}
	rg, err := httprange.Parse(header, size)
	switch {
	case errors.Is(err, httprange.ErrMultiple):
		return 0, 0, errorf(http.StatusBadRequest, "Requests with multiple ranges are not supported in Glance. You may make multiple single-range requests instead.")
	case errors.Is(err, httprange.ErrUnsatisfiable):
		e := errorf(http.StatusRequestedRangeNotSatisfiable, "The Range requested is not available.<br /><br />\nInvalid start position in Range header. Start position MUST be in the inclusive range [0, %d].", size-1)
		e.Header = http.Header{"Content-Range": {fmt.Sprintf("bytes */%d", size)}}
		return 0, 0, e
	case err != nil:
		return 0, 0, errorf(http.StatusBadRequest, "Invalid Range header %q: %v", header, err)
	}
	return rg.Start, rg.Length, nil
}

// openData opens the image's bytes positioned at start, as a bare *os.File
// when the store can give one (the sendfile path).
func (a *API) openData(r *http.Request, imageID string, start int64) (io.ReadCloser, error) {
	if fo, ok := a.store.(storage.FileOpener); ok {
		f, err := fo.OpenFile(r.Context(), imageID)
		if err != nil {
			return nil, fmt.Errorf("image %s data: %w", imageID, err)
		}
		if _, err := f.Seek(start, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	rd, err := a.store.Open(r.Context(), imageID)
	if err != nil {
		return nil, fmt.Errorf("image %s data: %w", imageID, err)
	}
	if _, err := rd.Seek(start, io.SeekStart); err != nil {
		rd.Close()
		return nil, err
	}
	return rd, nil
}
