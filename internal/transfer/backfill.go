package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"hangar/internal/catalog"
	"hangar/internal/checksum"
	"hangar/internal/storage"
)

// Backfill computes Glance's checksums (MD5 `checksum`, SHA-512
// `os_hash_value`) of active images that lack them: images written through
// transfers, whose finalize does not wait for them because imageio's block
// checksum already verified the bytes, and SHA-512 over an 8 GiB sparse
// image alone takes 16 s of a core here. It runs one image at a time at
// nice 19. Active images are immutable, so checksums computed after
// activation are the image's; until then Glance shows them as null, as it
// does for images without data of their own. It also steps aside while
// transfers move data (the disk and the cores are theirs), for at most
// maxYield per image, so that a busy server still gets its checksums.
type Backfill struct {
	cat   catalog.Catalog
	store storage.Store
	log   *slog.Logger
	busy  func() bool

	mu     sync.Mutex
	queue  []string
	queued map[string]bool
	wake   chan struct{}
}

const maxYield = time.Minute

func newBackfill(cat catalog.Catalog, store storage.Store, log *slog.Logger, busy func() bool) *Backfill {
	return &Backfill{cat: cat, store: store, log: log, busy: busy, queued: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// Add queues an image.
func (b *Backfill) Add(imageID string) {
	b.mu.Lock()
	if !b.queued[imageID] {
		b.queued[imageID] = true
		b.queue = append(b.queue, imageID)
	}
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Run queues every active image without checksums (a restart interrupted
// their backfill), then fills the queue until ctx ends.
func (b *Backfill) Run(ctx context.Context) error {
	if err := b.scan(ctx); err != nil {
		return err
	}
	for {
		id, ok := b.next()
		if !ok {
			select {
			case <-b.wake:
				continue
			case <-ctx.Done():
				return nil
			}
		}
		if err := b.fill(ctx, id); err != nil && ctx.Err() == nil {
			b.log.Error("computing checksums", "image", id, "err", err)
		}
		b.mu.Lock()
		delete(b.queued, id)
		b.mu.Unlock()
	}
}

func (b *Backfill) next() (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		return "", false
	}
	id := b.queue[0]
	b.queue = b.queue[1:]
	return id, true
}

func (b *Backfill) scan(ctx context.Context) error {
	for _, status := range []string{catalog.StatusActive, catalog.StatusDeactivated} {
		ims, err := b.cat.ListImages(ctx, catalog.Query{Viewer: catalog.Viewer{Admin: true},
			Filter: catalog.Filter{Status: &status, Visibility: "all"}})
		if err != nil {
			return fmt.Errorf("backfill: %w", err)
		}
		for _, im := range ims {
			if im.Checksum == nil {
				b.Add(im.ID)
			}
		}
	}
	return nil
}

// fill computes and records one image's checksums. The hashing runs on
// threads of its own at nice 19 (checksum.Background).
func (b *Backfill) fill(ctx context.Context, imageID string) error {
	im, err := b.cat.GetImage(ctx, imageID)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil
	}
	if err != nil || im.Checksum != nil || im.Size == nil {
		return err
	}
	r, err := b.store.Open(ctx, imageID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	defer r.Close()
	res := make(chan hashResult, 1)
	go func() { // its own goroutine: Background leaves its thread niced
		sums, err := checksum.Background(io.Discard, &politeReader{ctx: ctx, r: r, busy: b.busy, budget: maxYield})
		res <- hashResult{sums, err}
	}()
	h := <-res
	if h.err != nil {
		return h.err
	}
	_, err = b.cat.UpdateImage(context.WithoutCancel(ctx), imageID, func(im *catalog.Image) error {
		if im.Checksum != nil {
			return nil
		}
		if im.Size == nil || *im.Size != h.sums.Size {
			return fmt.Errorf("image %s: read %d bytes, recorded size %v: %w", imageID, h.sums.Size, im.Size, catalog.ErrConflict)
		}
		setSums(im, h.sums)
		return nil
	})
	if errors.Is(err, catalog.ErrNotFound) {
		return nil
	}
	return err
}

type hashResult struct {
	sums checksum.Sums
	err  error
}

// politeReader waits while busy() (spending at most budget in all) before
// each read, and stops when ctx ends.
type politeReader struct {
	ctx    context.Context
	r      io.Reader
	busy   func() bool
	budget time.Duration
}

func (p *politeReader) Read(b []byte) (int, error) {
	for p.budget > 0 && p.busy() {
		const step = 50 * time.Millisecond
		select {
		case <-time.After(step):
			p.budget -= step
		case <-p.ctx.Done():
		}
		if p.ctx.Err() != nil {
			break
		}
	}
	if err := p.ctx.Err(); err != nil {
		return 0, err
	}
	return p.r.Read(b)
}
