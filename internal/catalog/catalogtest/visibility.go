package catalogtest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"hangar/internal/catalog"
)

func testVisibility(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	mk := func(name, vis, owner string) *catalog.Image {
		im := NewImage(name)
		im.Visibility, im.Owner = vis, ptr(owner)
		return mustCreate(t, c, im)
	}
	mk("p1-private", catalog.Private, "p1")
	shared := mk("p1-shared", catalog.Shared, "p1")
	pending := mk("p1-shared-pending", catalog.Shared, "p1")
	mk("p1-public", catalog.Public, "p1")
	mk("p1-community", catalog.Community, "p1")
	mk("p2-private", catalog.Private, "p2")
	c.AddMember(ctx, &catalog.Member{ImageID: shared.ID, MemberID: "p2", Status: "accepted"})
	c.AddMember(ctx, &catalog.Member{ImageID: pending.ID, MemberID: "p2", Status: "pending"})

	p2 := catalog.Viewer{Project: "p2"}
	p3 := catalog.Viewer{Project: "p3"}
	cases := []struct {
		name   string
		viewer catalog.Viewer
		filter catalog.Filter
		want   []string
	}{
		{"owner sees own, public, accepted shares", p2, catalog.Filter{},
			[]string{"p1-public", "p1-shared", "p2-private"}},
		{"stranger sees public only", p3, catalog.Filter{}, []string{"p1-public"}},
		{"community listed on request", p3, catalog.Filter{Visibility: "community"}, []string{"p1-community"}},
		{"all adds community", p3, catalog.Filter{Visibility: "all"}, []string{"p1-community", "p1-public"}},
		{"pending shares by member_status", p2, catalog.Filter{Visibility: "shared", MemberStatus: "pending"},
			[]string{"p1-shared-pending"}},
		{"shared with member_status all", p2, catalog.Filter{Visibility: "shared", MemberStatus: "all"},
			[]string{"p1-shared", "p1-shared-pending"}},
		{"private only own", p2, catalog.Filter{Visibility: "private"}, []string{"p2-private"}},
		{"admin sees everything", catalog.Viewer{Admin: true}, catalog.Filter{},
			[]string{"p1-community", "p1-private", "p1-public", "p1-shared", "p1-shared-pending", "p2-private"}},
	}
	for _, tc := range cases {
		got := list(t, c, catalog.Query{Viewer: tc.viewer, Filter: tc.filter, Sort: []catalog.Sort{{Key: "name"}}})
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func testMembers(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	im := mustCreate(t, c, NewImage("shared"))
	for _, p := range []string{"p2", "p3"} {
		if err := c.AddMember(ctx, &catalog.Member{ImageID: im.ID, MemberID: p, Status: "pending"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.AddMember(ctx, &catalog.Member{ImageID: im.ID, MemberID: "p2", Status: "pending"}); !errors.Is(err, catalog.ErrExists) {
		t.Fatalf("duplicate member: %v", err)
	}
	m, err := c.UpdateMemberStatus(ctx, im.ID, "p2", "accepted")
	if err != nil || m.Status != "accepted" || m.MemberID != "p2" || m.ImageID != im.ID {
		t.Fatalf("update: %+v %v", m, err)
	}
	ms, err := c.ListMembers(ctx, im.ID)
	if err != nil || len(ms) != 2 {
		t.Fatalf("list: %v %v", ms, err)
	}
	if err := c.DeleteMember(ctx, im.ID, "p3"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteMember(ctx, im.ID, "p3"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := c.UpdateMemberStatus(ctx, im.ID, "p9", "accepted"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("update unknown member: %v", err)
	}
}
