package glance

import (
	"context"
	"errors"
	"fmt"

	"hangar/internal/catalog"
	"hangar/internal/storage"
)

// receiving are the statuses in which bytes are in flight; after a crash
// nothing is, so images found in them go back to queued.
var receiving = []string{catalog.StatusSaving, catalog.StatusUploading, catalog.StatusImporting}

// Recover runs once at start-up, before serving: every image left
// mid-upload by a crash or kill -9 returns to queued and its partial data
// (temp files, an object committed but never recorded) is removed. A stage
// that completed is kept: the image returns to uploading, ready to import. Active images are not touched: their bytes were committed
// before they became active.
//
// With several servers sharing a catalog this would reset uploads running
// on the others; multi-server deployments need a lease per upload first.
func (a *API) Recover(ctx context.Context) (int, error) {
	n := 0
	for _, status := range receiving {
		st := status
		ims, err := a.cat.ListImages(ctx, catalog.Query{Viewer: catalog.Viewer{Admin: true},
			Filter: catalog.Filter{Status: &st}})
		if err != nil {
			return n, fmt.Errorf("recover: %w", err)
		}
		for _, im := range ims {
			if live, err := a.liveTransfer(ctx, im.ID); err != nil || live {
				if err != nil {
					return n, err
				}
				continue // a write transfer owns it: its data survives restarts
			}
			if err := a.recoverImage(ctx, im.ID, st); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

func (a *API) recoverImage(ctx context.Context, imageID, status string) error {
	if tc, ok := a.store.(storage.TempCleaner); ok {
		for _, name := range []string{imageID, stagingName(imageID)} {
			if err := tc.RemoveTemp(ctx, name); err != nil {
				return fmt.Errorf("recover %s: %w", imageID, err)
			}
		}
	}
	if err := a.deleteObject(ctx, imageID); err != nil {
		return fmt.Errorf("recover %s: %w", imageID, err)
	}
	staged, err := a.store.Stat(ctx, stagingName(imageID))
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("recover %s: %w", imageID, err)
	}
	hasStage := err == nil
	_, err = a.cat.UpdateImage(ctx, imageID, func(im *catalog.Image) error {
		im.Status, im.Size, im.VirtualSize = catalog.StatusQueued, nil, nil
		if hasStage {
			im.Status, im.Size = catalog.StatusUploading, &staged.Size
		}
		if status == catalog.StatusImporting {
			im.RemoveProperty("os_glance_import_task")
			im.SetProperty("os_glance_importing_to_stores", "")
			im.SetProperty("os_glance_failed_import", StoreID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recover %s: %w", imageID, err)
	}
	a.log.Info("recovered interrupted upload", "image", imageID, "was", status, "staged", hasStage)
	return nil
}

func (a *API) liveTransfer(ctx context.Context, imageID string) (bool, error) {
	if a.transfers == nil {
		return false, nil
	}
	return a.transfers.Live(ctx, imageID)
}
