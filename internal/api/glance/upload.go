package glance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"hangar/internal/auth"
	"hangar/internal/catalog"
	"hangar/internal/checksum"
	"hangar/internal/storage"
	"hangar/internal/transfer"
)

func requireOctetStream(r *http.Request) error {
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	if ct = strings.TrimSpace(ct); ct != "application/octet-stream" {
		return errorf(http.StatusUnsupportedMediaType, "The request media type %s is not supported by this server.", ct)
	}
	return nil
}

// transition moves a queued image to a data-receiving status, or answers
// 409 as Glance does when another upload got there first.
func (a *API) transition(ctx context.Context, imageID, to string) error {
	_, err := a.update(ctx, imageID, func(im *catalog.Image) error {
		if im.Status != catalog.StatusQueued {
			return errorf(http.StatusConflict, "Image status transition from %s to %s is not allowed", im.Status, to)
		}
		im.Status = to
		return nil
	})
	return err
}

// receive checks a data upload (file or stage), moves the image from
// queued to status and stores the bounded body as object. On failure the
// image is queued again and nothing of the body is kept.
func (a *API) receive(w http.ResponseWriter, r *http.Request, id auth.Identity, status, object string) (checksum.Sums, error) {
	if err := requireOctetStream(r); err != nil {
		return checksum.Sums{}, err
	}
	imageID := r.PathValue("id")
	if _, err := a.loadOwnImage(r.Context(), id, imageID); err != nil {
		return checksum.Sums{}, err
	}
	if err := checkDeclaredSize(r, a.cfg.MaxImageSize); err != nil {
		return checksum.Sums{}, err
	}
	if err := a.transition(r.Context(), imageID, status); err != nil {
		return checksum.Sums{}, err
	}
	body := http.MaxBytesReader(w, r.Body, a.cfg.MaxImageSize)
	sums, err := a.storeObject(r.Context(), object, body)
	if err != nil {
		a.deleteObject(context.Background(), object)
		a.revert(imageID, status)
		return checksum.Sums{}, uploadError(err)
	}
	return sums, nil
}

// revert puts an image whose data transfer failed back to queued; it only
// touches an image still in the status the transfer set.
func (a *API) revert(imageID, from string) {
	// The request context may be gone (client hung up): use a fresh one.
	_, err := a.cat.UpdateImage(context.Background(), imageID, func(im *catalog.Image) error {
		if im.Status != from {
			return catalog.ErrConflict
		}
		im.Status = catalog.StatusQueued
		im.Size = nil
		return nil
	})
	if err != nil && !errors.Is(err, catalog.ErrConflict) && !errors.Is(err, catalog.ErrNotFound) {
		a.log.Error("could not return image to queued", "image", imageID, "err", err)
	}
}

func (a *API) upload(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	imageID := r.PathValue("id")
	sums, err := a.receive(w, r, id, catalog.StatusSaving, imageID)
	if err != nil {
		return err
	}
	if err := a.activate(r.Context(), imageID, sums, catalog.StatusSaving); err != nil {
		return err
	}
	return noContent(w)
}

// checkDeclaredSize refuses before reading a body that announces more
// bytes than the cap, or a negative or unparsable size.
func checkDeclaredSize(r *http.Request, max int64) error {
	if r.ContentLength > max {
		return errorf(http.StatusRequestEntityTooLarge, "Image exceeds the size limit of %d bytes.", max)
	}
	for _, h := range []string{"X-Openstack-Image-Size"} {
		v := r.Header.Get(h)
		if v == "" {
			continue
		}
		var n int64
		if _, err := fmt.Sscan(v, &n); err != nil || n < 0 || fmt.Sprint(n) != v {
			return errorf(http.StatusBadRequest, "Invalid %s header: %s", h, v)
		}
		if n > max {
			return errorf(http.StatusRequestEntityTooLarge, "Image exceeds the size limit of %d bytes.", max)
		}
	}
	return nil
}

// uploadError explains a failed body read; the client is often gone.
func uploadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "request body") {
		return errorf(http.StatusBadRequest, "The image data ended before all of it arrived: %v", err)
	}
	return err
}

// storeObject streams src into the image's object, hashing on the way. Any
// leftover object under the name is from an interrupted earlier attempt
// (the caller holds the image in a receiving status), so it is replaced.
func (a *API) storeObject(ctx context.Context, name string, src io.Reader) (checksum.Sums, error) {
	if err := a.deleteObject(ctx, name); err != nil {
		return checksum.Sums{}, err
	}
	wr, err := a.store.Create(ctx, name)
	if err != nil {
		return checksum.Sums{}, err
	}
	sums, err := checksum.Copy(wr, src)
	if err != nil {
		wr.Abort()
		return checksum.Sums{}, err
	}
	return sums, wr.Close()
}

func (a *API) deleteObject(ctx context.Context, name string) error {
	err := a.store.Delete(ctx, name)
	if err == nil || errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

// activate records the finished data. If the image was deleted meanwhile,
// the bytes are removed and the client told, as Glance does (410).
func (a *API) activate(ctx context.Context, imageID string, sums checksum.Sums, from string, also ...func(*catalog.Image)) error {
	err := transfer.Activate(ctx, a.cat, a.store, imageID, sums, from, also...)
	if errors.Is(err, catalog.ErrNotFound) || errors.Is(err, catalog.ErrConflict) {
		a.removeData(context.WithoutCancel(ctx), imageID)
		return errorf(http.StatusGone, "Image %s could not be found after upload. The image may have been deleted during the upload.", imageID)
	}
	return err
}
