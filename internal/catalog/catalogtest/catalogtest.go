// Package catalogtest is the conformance suite every catalog implementation
// runs against its real engine: catalogtest.Run(t, newCatalog).
package catalogtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"hangar/internal/catalog"
)

// Run runs the suite; newCatalog returns a fresh, empty catalog per subtest.
func Run(t *testing.T, newCatalog func(t *testing.T) catalog.Catalog) {
	tests := []struct {
		name string
		fn   func(t *testing.T, c catalog.Catalog)
	}{
		{"CreateGetRoundTrip", testRoundTrip},
		{"CreateDuplicateID", testDuplicate},
		{"GetUnknown", testUnknown},
		{"UpdateMutates", testUpdate},
		{"UpdateErrorChangesNothing", testUpdateAbort},
		{"ConcurrentTransitionsOneWins", testRace},
		{"DeleteCascades", testDelete},
		{"ListFilters", testListFilters},
		{"ListSortAndPaginate", testPaginate},
		{"ListVisibility", testVisibility},
		{"Members", testMembers},
		{"Transfers", testTransfers},
		{"TransferPhaseRace", testTransferRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newCatalog(t)) })
	}
}

func ptr[T any](v T) *T { return &v }

// NewImage returns a queued image with a fresh id.
func NewImage(name string) *catalog.Image {
	return &catalog.Image{ID: uuid.NewString(), Name: ptr(name), Visibility: catalog.Shared,
		Status: catalog.StatusQueued, Tags: []string{}}
}

func mustCreate(t *testing.T, c catalog.Catalog, im *catalog.Image) *catalog.Image {
	t.Helper()
	if err := c.CreateImage(context.Background(), im); err != nil {
		t.Fatalf("CreateImage: %v", err)
	}
	return im
}

func testRoundTrip(t *testing.T, c catalog.Catalog) {
	im := NewImage("rt")
	im.DiskFormat, im.ContainerFormat = ptr("qcow2"), ptr("bare")
	im.Size, im.Checksum, im.Owner = ptr(int64(1<<40)), ptr("abc"), ptr("proj")
	im.BlockChecksum = ptr("0123456789abcdef")
	im.Protected, im.MinRAM, im.MinDisk = true, 512, 1
	im.Tags = []string{"b", "a"}
	im.Properties = []catalog.Property{{Key: "z_first", Value: "1"}, {Key: "a_second", Value: "2"}}
	im.CreatedAt = time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	mustCreate(t, c, im)
	got, err := c.GetImage(context.Background(), im.ID)
	if err != nil {
		t.Fatal(err)
	}
	im.UpdatedAt = im.CreatedAt
	if !reflect.DeepEqual(got, im) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, im)
	}
}

func testDuplicate(t *testing.T, c catalog.Catalog) {
	im := mustCreate(t, c, NewImage("one"))
	dup := NewImage("two")
	dup.ID = im.ID
	if err := c.CreateImage(context.Background(), dup); !errors.Is(err, catalog.ErrExists) {
		t.Fatalf("duplicate id: %v, want ErrExists", err)
	}
}

func testUnknown(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	id := uuid.NewString()
	if _, err := c.GetImage(ctx, id); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("GetImage: %v", err)
	}
	if _, err := c.UpdateImage(ctx, id, func(*catalog.Image) error { return nil }); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("UpdateImage: %v", err)
	}
	if err := c.DeleteImage(ctx, id); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("DeleteImage: %v", err)
	}
	if _, err := c.GetMember(ctx, id, "p"); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("GetMember: %v", err)
	}
	if err := c.AddMember(ctx, &catalog.Member{ImageID: id, MemberID: "p", Status: "pending"}); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("AddMember to unknown image: %v", err)
	}
}

func testUpdate(t *testing.T, c catalog.Catalog) {
	im := mustCreate(t, c, NewImage("before"))
	got, err := c.UpdateImage(context.Background(), im.ID, func(im *catalog.Image) error {
		im.Name = ptr("after")
		im.Tags = append(im.Tags, "new")
		im.SetProperty("os_distro", "fedora")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.GetImage(context.Background(), im.ID)
	if *again.Name != "after" || !again.HasTag("new") || !reflect.DeepEqual(got, again) {
		t.Fatalf("update not stored: %+v", again)
	}
	if v, _ := again.Property("os_distro"); v != "fedora" {
		t.Fatalf("property = %q", v)
	}
	if !again.UpdatedAt.After(im.CreatedAt) && !again.UpdatedAt.Equal(im.CreatedAt) {
		t.Fatal("updated_at went backwards")
	}
}

func testUpdateAbort(t *testing.T, c catalog.Catalog) {
	im := mustCreate(t, c, NewImage("keep"))
	boom := errors.New("boom")
	_, err := c.UpdateImage(context.Background(), im.ID, func(im *catalog.Image) error {
		im.Name = ptr("changed")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want mutate's error", err)
	}
	got, _ := c.GetImage(context.Background(), im.ID)
	if *got.Name != "keep" {
		t.Fatal("aborted update was stored")
	}
}

// Two uploads race for one queued image: the transition queued → saving
// must be granted exactly once.
func testRace(t *testing.T, c catalog.Catalog) {
	im := mustCreate(t, c, NewImage("race"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.UpdateImage(context.Background(), im.ID, func(im *catalog.Image) error {
				if im.Status != catalog.StatusQueued {
					return catalog.ErrConflict
				}
				im.Status = catalog.StatusSaving
				return nil
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, catalog.ErrConflict):
				conflicts++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || conflicts != 7 {
		t.Fatalf("wins=%d conflicts=%d, want 1 and 7", wins, conflicts)
	}
}

func testDelete(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	im := NewImage("gone")
	im.Tags = []string{"t"}
	im.Properties = []catalog.Property{{Key: "k", Value: "v"}}
	mustCreate(t, c, im)
	c.AddMember(ctx, &catalog.Member{ImageID: im.ID, MemberID: "p2", Status: "pending"})
	if err := c.DeleteImage(ctx, im.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetImage(ctx, im.ID); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	// The id can be used again with no leftovers.
	again := NewImage("again")
	again.ID = im.ID
	mustCreate(t, c, again)
	got, _ := c.GetImage(ctx, im.ID)
	if len(got.Tags) != 0 || len(got.Properties) != 0 {
		t.Fatalf("leftovers: %+v", got)
	}
	if ms, _ := c.ListMembers(ctx, im.ID); len(ms) != 0 {
		t.Fatalf("leftover members: %v", ms)
	}
}

func names(ims []*catalog.Image) []string {
	out := []string{}
	for _, im := range ims {
		out = append(out, *im.Name)
	}
	return out
}

func list(t *testing.T, c catalog.Catalog, q catalog.Query) []string {
	t.Helper()
	if q.Viewer == (catalog.Viewer{}) {
		q.Viewer.Admin = true
	}
	ims, err := c.ListImages(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return names(ims)
}

func testListFilters(t *testing.T, c catalog.Catalog) {
	a := NewImage("a")
	a.DiskFormat, a.Size, a.Tags = ptr("raw"), ptr(int64(100)), []string{"x", "y"}
	a.Properties = []catalog.Property{{Key: "os_distro", Value: "fedora"}}
	b := NewImage("b")
	b.DiskFormat, b.Size, b.Status, b.Protected = ptr("qcow2"), ptr(int64(5000)), catalog.StatusActive, true
	b.Tags = []string{"x"}
	h := NewImage("hidden")
	h.OSHidden = true
	for i, im := range []*catalog.Image{a, b, h} {
		im.CreatedAt = time.Unix(int64(1000+i), 0)
		mustCreate(t, c, im)
	}
	f := func(f catalog.Filter) []string {
		return list(t, c, catalog.Query{Filter: f, Sort: []catalog.Sort{{Key: "name"}}})
	}
	cases := []struct {
		name   string
		filter catalog.Filter
		want   []string
	}{
		{"none", catalog.Filter{}, []string{"a", "b", "hidden"}},
		{"name", catalog.Filter{Name: ptr("b")}, []string{"b"}},
		{"status", catalog.Filter{Status: ptr("active")}, []string{"b"}},
		{"disk_format", catalog.Filter{DiskFormat: ptr("raw")}, []string{"a"}},
		{"size_min", catalog.Filter{SizeMin: ptr(int64(101))}, []string{"b"}},
		{"size_max", catalog.Filter{SizeMax: ptr(int64(100))}, []string{"a"}},
		{"protected", catalog.Filter{Protected: ptr(true)}, []string{"b"}},
		{"os_hidden false", catalog.Filter{OSHidden: ptr(false)}, []string{"a", "b"}},
		{"one tag", catalog.Filter{Tags: []string{"x"}}, []string{"a", "b"}},
		{"two tags", catalog.Filter{Tags: []string{"x", "y"}}, []string{"a"}},
		{"property", catalog.Filter{Properties: []catalog.Property{{Key: "os_distro", Value: "fedora"}}}, []string{"a"}},
		{"no match", catalog.Filter{Name: ptr("zzz")}, []string{}},
	}
	for _, tc := range cases {
		if got := f(tc.filter); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func testPaginate(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	var all []*catalog.Image
	for i := 0; i < 7; i++ {
		im := NewImage(fmt.Sprintf("img-%d", i%3)) // duplicate names: id breaks ties
		im.CreatedAt = time.Unix(2000, int64(i))
		if i%2 == 0 {
			im.Size = ptr(int64(i))
		}
		all = append(all, mustCreate(t, c, im))
	}
	for _, sorts := range [][]catalog.Sort{
		nil, // created_at desc
		{{Key: "name"}},
		{{Key: "name", Desc: true}, {Key: "size"}},
		{{Key: "size", Desc: true}},
		{{Key: "status"}, {Key: "created_at"}},
	} {
		full, err := c.ListImages(ctx, catalog.Query{Viewer: catalog.Viewer{Admin: true}, Sort: sorts})
		if err != nil {
			t.Fatal(err)
		}
		if len(full) != 7 {
			t.Fatalf("sort %v: %d images", sorts, len(full))
		}
		var paged []*catalog.Image
		var marker *catalog.Image
		for pages := 0; pages < 10; pages++ {
			page, err := c.ListImages(ctx, catalog.Query{Viewer: catalog.Viewer{Admin: true}, Sort: sorts, Limit: 3, Marker: marker})
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, page...)
			if len(page) < 3 {
				break
			}
			marker = page[len(page)-1]
		}
		if !reflect.DeepEqual(ids(paged), ids(full)) {
			t.Errorf("sort %v: pages give %v, one list gives %v", sorts, ids(paged), ids(full))
		}
	}
	// default order is newest first
	full, _ := c.ListImages(ctx, catalog.Query{Viewer: catalog.Viewer{Admin: true}})
	if full[0].ID != all[6].ID || full[6].ID != all[0].ID {
		t.Errorf("default order is not created_at desc")
	}
}

func ids(ims []*catalog.Image) []string {
	out := []string{}
	for _, im := range ims {
		out = append(out, im.ID)
	}
	return out
}
