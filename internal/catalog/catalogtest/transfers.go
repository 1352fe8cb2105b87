package catalogtest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"hangar/internal/catalog"
)

func newTransfer(imageID string) *catalog.Transfer {
	return &catalog.Transfer{ID: uuid.NewString() + "-secret", ImageID: imageID, Ops: []string{"write"},
		Size: 1 << 30, Timeout: 300, InactivityTimeout: 60,
		ExpiresAt: time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond), Phase: catalog.PhaseTransferring}
}

func testTransfers(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	im := mustCreate(t, c, NewImage("t"))
	tr := newTransfer(im.ID)
	if err := c.CreateTransfer(ctx, tr); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTransfer(ctx, &catalog.Transfer{ID: tr.ID, ImageID: im.ID, Ops: []string{"read"}}); !errors.Is(err, catalog.ErrExists) {
		t.Fatalf("duplicate transfer id: %v", err)
	}
	bad := newTransfer(uuid.NewString())
	if err := c.CreateTransfer(ctx, bad); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("transfer of unknown image: %v", err)
	}
	got, err := c.GetTransfer(ctx, tr.ID)
	if err != nil || !reflect.DeepEqual(got, tr) {
		t.Fatalf("round trip:\n got %+v\nwant %+v (%v)", got, tr, err)
	}
	if !got.Can("read") || !got.Can("write") {
		t.Fatal("write transfer must allow read and write")
	}
	up, err := c.UpdateTransfer(ctx, tr.ID, func(t *catalog.Transfer) error {
		t.Transferred = 42
		t.Done = catalog.AddRanges(t.Done, catalog.Range{Off: 0, Len: 10}, catalog.Range{Off: 100, Len: 5})
		return nil
	})
	if again, _ := c.GetTransfer(ctx, tr.ID); err != nil || len(again.Done) != 2 || again.Done[1].Off != 100 {
		t.Fatalf("done ranges not stored: %+v %v", again, err)
	}
	if err != nil || up.Transferred != 42 {
		t.Fatalf("update: %+v %v", up, err)
	}
	if ts, _ := c.ListTransfers(ctx, im.ID); len(ts) != 1 {
		t.Fatalf("list: %v", ts)
	}
	if err := c.DeleteTransfer(ctx, tr.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetTransfer(ctx, tr.ID); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	// Deleting the image takes its transfers.
	tr2 := newTransfer(im.ID)
	c.CreateTransfer(ctx, tr2)
	c.DeleteImage(ctx, im.ID)
	if _, err := c.GetTransfer(ctx, tr2.ID); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("transfer outlived its image: %v", err)
	}
}

// Finalize and cancel race: exactly one moves the transfer out of
// transferring.
func testTransferRace(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	im := mustCreate(t, c, NewImage("race"))
	tr := newTransfer(im.ID)
	c.CreateTransfer(ctx, tr)
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for _, phase := range []string{catalog.PhaseFinalizing, catalog.PhaseCancelled, catalog.PhaseFinalizing, catalog.PhaseCancelled} {
		wg.Add(1)
		go func(phase string) {
			defer wg.Done()
			_, err := c.UpdateTransfer(ctx, tr.ID, func(t *catalog.Transfer) error {
				if t.Phase != catalog.PhaseTransferring {
					return catalog.ErrConflict
				}
				t.Phase = phase
				return nil
			})
			if err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}(phase)
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d transitions won, want 1", wins)
	}
}
