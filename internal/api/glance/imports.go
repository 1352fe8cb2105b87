package glance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/google/uuid"

	"hangar/internal/auth"
	"hangar/internal/catalog"
	"hangar/internal/checksum"
)

// Interoperable image import (Image API v2.6+): data is staged first
// (glance-direct) or fetched by the server (web-download), then imported by
// a background task; the image goes uploading → importing → active.

func stagingName(imageID string) string { return "staging-" + imageID }

func (a *API) stage(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	imageID := r.PathValue("id")
	sums, err := a.receive(w, r, id, catalog.StatusUploading, stagingName(imageID))
	if err != nil {
		return err
	}
	// Glance shows the staged size while the image is uploading.
	_, err = a.update(context.WithoutCancel(r.Context()), imageID, func(im *catalog.Image) error {
		im.Size = &sums.Size
		return nil
	})
	if err != nil {
		return err
	}
	return noContent(w)
}

type importRequest struct {
	Method struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	} `json:"method"`
	Stores    []string `json:"stores"`
	AllStores bool     `json:"all_stores"`
}

func (a *API) importImage(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	var req importRequest
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	for _, s := range req.Stores {
		if s != StoreID {
			return errorf(http.StatusConflict, "Store for identifier %s not found", s)
		}
	}
	imageID := r.PathValue("id")
	im, err := a.loadOwnImage(r.Context(), id, imageID)
	if err != nil {
		return err
	}
	var src func(ctx context.Context) (io.ReadCloser, error)
	switch req.Method.Name {
	case "glance-direct":
		src, err = a.importStaged(r.Context(), imageID)
	case "web-download":
		src, err = a.importWeb(r.Context(), imageID, req.Method.URI)
	case "copy-image":
		err = copyImage(im)
	default:
		err = errorf(http.StatusBadRequest, "Import method %q is not one of %v.", req.Method.Name, importMethods)
	}
	if err != nil {
		return err
	}
	a.startImport(imageID, src)
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func decodeStrict(body []byte, v any) error {
	if _, err := decodeObject(body); err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errorf(http.StatusBadRequest, "Invalid import request: %v", err)
	}
	return nil
}

// copyImage answers as Glance does when every configured store (here: one)
// already holds the image.
func copyImage(im *catalog.Image) error {
	if im.Status != catalog.StatusActive {
		return errorf(http.StatusConflict, "Image needs to be in 'active' state to use 'copy-image' method")
	}
	return errorf(http.StatusConflict, "Image is already present at store '%s'", StoreID)
}

func (a *API) importStaged(ctx context.Context, imageID string) (func(context.Context) (io.ReadCloser, error), error) {
	if _, err := a.beginImport(ctx, imageID, catalog.StatusUploading, "glance-direct"); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (io.ReadCloser, error) {
		return a.store.Open(ctx, stagingName(imageID))
	}, nil
}

func (a *API) importWeb(ctx context.Context, imageID, uri string) (func(context.Context) (io.ReadCloser, error), error) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errorf(http.StatusBadRequest, "URI for web-download must be an http or https URL, got %q", uri)
	}
	if _, err := a.beginImport(ctx, imageID, catalog.StatusQueued, "web-download"); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (io.ReadCloser, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
		if err != nil {
			return nil, err
		}
		resp, err := a.cfg.ImportClient.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("web-download %s: %s", uri, resp.Status)
		}
		return resp.Body, nil
	}, nil
}

// beginImport moves the image to importing and records the task, like
// Glance's os_glance_import_task property.
func (a *API) beginImport(ctx context.Context, imageID, from, method string) (*catalog.Image, error) {
	return a.update(ctx, imageID, func(im *catalog.Image) error {
		if im.Status != from {
			if method == "glance-direct" {
				return errorf(http.StatusConflict, "Image needs to be staged before 'glance-direct' method can be used")
			}
			return errorf(http.StatusConflict, "Image needs to be in 'queued' state to use '%s' method", method)
		}
		im.Status = catalog.StatusImporting
		im.SetProperty("os_glance_import_task", uuid.NewString())
		im.SetProperty("os_glance_importing_to_stores", StoreID)
		im.RemoveProperty("os_glance_failed_import")
		return nil
	})
}

// startImport copies src into the image's object in the background and
// activates the image, or marks the import failed and re-queues it.
func (a *API) startImport(imageID string, src func(context.Context) (io.ReadCloser, error)) {
	a.tasks.Add(1)
	go func() {
		defer a.tasks.Done()
		err := a.runImport(a.ctx, imageID, src)
		a.deleteObject(context.Background(), stagingName(imageID))
		if err != nil {
			a.log.Warn("import failed", "image", imageID, "err", err)
		}
	}()
}

func (a *API) runImport(ctx context.Context, imageID string, src func(context.Context) (io.ReadCloser, error)) error {
	rc, err := src(ctx)
	var sums checksum.Sums
	if err == nil {
		sums, err = a.storeObject(ctx, imageID, io.LimitReader(rc, a.cfg.MaxImageSize+1))
		rc.Close()
	}
	if err == nil && sums.Size > a.cfg.MaxImageSize {
		err = fmt.Errorf("image exceeds the size limit of %d bytes", a.cfg.MaxImageSize)
	}
	if err != nil {
		a.failImport(imageID)
		return err
	}
	// Glance's import bookkeeping changes with the status, in one update.
	return a.activate(ctx, imageID, sums, catalog.StatusImporting, func(im *catalog.Image) {
		im.RemoveProperty("os_glance_import_task")
		im.SetProperty("os_glance_importing_to_stores", "")
		im.SetProperty("os_glance_failed_import", "")
	})
}

func (a *API) failImport(imageID string) {
	a.deleteObject(context.Background(), imageID)
	_, err := a.cat.UpdateImage(context.Background(), imageID, func(im *catalog.Image) error {
		if im.Status != catalog.StatusImporting {
			return catalog.ErrConflict
		}
		im.Status, im.Size = catalog.StatusQueued, nil
		im.RemoveProperty("os_glance_import_task")
		im.SetProperty("os_glance_importing_to_stores", "")
		im.SetProperty("os_glance_failed_import", StoreID)
		return nil
	})
	if err != nil && !errors.Is(err, catalog.ErrNotFound) && !errors.Is(err, catalog.ErrConflict) {
		a.log.Error("could not record failed import", "image", imageID, "err", err)
	}
}
