package glance

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"hangar/internal/auth"
	"hangar/internal/catalog"
)

var importMethods = []string{"glance-direct", "web-download", "copy-image"}

func (a *API) createImage(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	kvs, err := readObject(r)
	if err != nil {
		return err
	}
	im := &catalog.Image{ID: uuid.NewString(), Visibility: catalog.Shared, Status: catalog.StatusQueued, Tags: []string{}}
	if id.Project != "" {
		im.Owner = &id.Project
	}
	for _, kv := range kvs {
		if err := checkWritable(kv.Key); err != nil {
			return err
		}
	}
	for _, kv := range kvs {
		if err := setField(im, id, kv.Key, kv.Value); err != nil {
			return err
		}
	}
	im.CreatedAt = now()
	err = a.cat.CreateImage(r.Context(), im)
	if errors.Is(err, catalog.ErrExists) {
		return errorf(http.StatusConflict, "Image ID %s already exists!", im.ID)
	}
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Location", baseURL(r)+"/v2/images/"+im.ID)
	h.Set("OpenStack-image-import-methods", "glance-direct,web-download,copy-image")
	h.Set("OpenStack-image-store-ids", StoreID)
	return writeJSON(w, http.StatusCreated, imageRecord(im))
}

func (a *API) showImage(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	im, err := a.loadImage(r.Context(), id, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, imageRecord(im))
}

func (a *API) deleteImage(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	imageID := r.PathValue("id")
	im, err := a.loadImage(r.Context(), id, imageID)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusNotFound {
		return errorf(http.StatusNotFound, "Failed to find image %s to delete", imageID)
	}
	if err != nil {
		return err
	}
	if !owns(id, im) {
		return errorf(http.StatusForbidden, "You are not permitted to delete image %s.", imageID)
	}
	if im.Protected {
		return errorf(http.StatusForbidden, "Image %s is protected and cannot be deleted.", imageID)
	}
	a.hot.forget(imageID)
	defer a.hot.forget(imageID) // a download in between may have cached it
	if err := a.cat.DeleteImage(r.Context(), imageID); errors.Is(err, catalog.ErrNotFound) {
		return errorf(http.StatusNotFound, "Failed to find image %s to delete", imageID)
	} else if err != nil {
		return err
	}
	// The record is gone first, so no one is sent to missing bytes; an
	// upload still running finds the record gone and removes its own data.
	a.removeData(r.Context(), imageID)
	return noContent(w)
}

// removeData deletes every byte stored for an image: committed, staged and
// temporary. Missing pieces are fine; failures leave orphans, logged.
func (a *API) removeData(ctx context.Context, imageID string) {
	for _, name := range []string{imageID, stagingName(imageID)} {
		if err := a.deleteObject(ctx, name); err != nil {
			a.log.Warn("could not remove image data", "image", imageID, "object", name, "err", err)
		}
	}
}
