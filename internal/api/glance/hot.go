package glance

import (
	"context"
	"io"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"hangar/internal/catalog"
)

// Limits of the download hot cache.
const (
	hotEntries = 16384
	hotTTL     = time.Second
	// Images up to this size are kept in memory whole and written from
	// there: for 4 KiB, open+fstat+sendfile+close cost more than the copy.
	hotMaxBytes = 64 << 10
)

// hotImage is what a download needs of an active image.
type hotImage struct {
	im   *catalog.Image
	data []byte // the whole image if small, else nil
}

// hotCache keeps the records (and small images' bytes) of recently
// downloaded active images, so a hot GET makes no catalog query and no
// file system call. Bytes never go stale (active images never change);
// records may, so entries live hotTTL and this server's own changes drop
// them at once. Another server's change (a deactivation, a visibility
// change) is seen within hotTTL.
type hotCache struct {
	lru *expirable.LRU[string, *hotImage]
}

func newHotCache() *hotCache {
	return &hotCache{lru: expirable.NewLRU[string, *hotImage](hotEntries, nil, hotTTL)}
}

func (h *hotCache) forget(imageID string) { h.lru.Remove(imageID) }

// hotImage returns the image's record (and a small image's bytes), from
// the cache or the catalog.
func (a *API) hotImage(ctx context.Context, imageID string) (*hotImage, error) {
	if e, ok := a.hot.lru.Get(imageID); ok {
		return e, nil
	}
	im, err := a.cat.GetImage(ctx, imageID)
	if err != nil {
		return nil, err
	}
	e := &hotImage{im: im}
	if im.Status != catalog.StatusActive || im.Size == nil {
		return e, nil // not cached: it is about to change
	}
	if *im.Size <= hotMaxBytes {
		if e.data, err = a.readAll(ctx, imageID, *im.Size); err != nil {
			return nil, err
		}
	}
	a.hot.lru.Add(imageID, e)
	return e, nil
}

func (a *API) readAll(ctx context.Context, imageID string, size int64) ([]byte, error) {
	r, err := a.store.Open(ctx, imageID)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, err
	}
	return data, nil
}
