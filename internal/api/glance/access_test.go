package glance

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"hangar/internal/auth"
)

const tokens = `
admin-token  proj-admin admin,member
alice-token  proj-a     member
bob-token    proj-b     member
carol-token  proj-c     reader
`

func tokenEnv(t *testing.T) *testEnv {
	tk, err := auth.ParseTokens(strings.NewReader(tokens))
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, tk)
}

func listAs(t *testing.T, e *testEnv, token, query string) []string {
	r := e.do("GET", "/v2/images"+query, nil, "X-Auth-Token: "+token)
	if r.status != 200 {
		t.Fatalf("list as %s: %d %s", token, r.status, r.body)
	}
	n := names(t, r)
	sort.Strings(n)
	return n
}

func TestTokensRequired(t *testing.T) {
	e := tokenEnv(t)
	for _, h := range [][]string{nil, {"X-Auth-Token: wrong"}} {
		r := e.do("GET", "/v2/images", nil, append(h, "Accept: application/json")...)
		if r.status != http.StatusUnauthorized || r.json(t)["title"] != "Unauthorized" {
			t.Fatalf("token %v: %d %s", h, r.status, r.body)
		}
	}
	if r := e.do("GET", "/versions", nil); r.status != 200 {
		t.Fatalf("versions need no token: %d", r.status)
	}
}

func TestVisibilityRules(t *testing.T) {
	e := tokenEnv(t)
	alice, bob, carol, admin := "X-Auth-Token: alice-token", "X-Auth-Token: bob-token", "X-Auth-Token: carol-token", "X-Auth-Token: admin-token"
	private := e.create(map[string]any{"name": "a-private", "visibility": "private"}, alice)
	shared := e.create(map[string]any{"name": "a-shared"}, alice)
	e.create(map[string]any{"name": "a-community", "visibility": "community"}, alice)
	if r := e.do("POST", "/v2/images", map[string]any{"name": "x", "visibility": "public"}, alice); r.status != http.StatusForbidden {
		t.Fatalf("member publishing: %d", r.status)
	}
	public := e.create(map[string]any{"name": "admin-public", "visibility": "public"}, admin)
	if own := e.show(private, alice)["owner"]; own != "proj-a" {
		t.Fatalf("owner = %v", own)
	}

	check := func(who, token, query string, want ...string) {
		t.Helper()
		if got := listAs(t, e, strings.TrimPrefix(token, "X-Auth-Token: "), query); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s lists %s: %v, want %v", who, query, got, want)
		}
	}
	check("alice", alice, "", "a-community", "a-private", "a-shared", "admin-public") // own community images are listed
	check("bob", bob, "", "admin-public")
	check("bob", bob, "?visibility=community", "a-community")
	check("admin", admin, "", "a-community", "a-private", "a-shared", "admin-public")

	// Private images do not exist for others; public and community ones can be read, not changed.
	if r := e.do("GET", "/v2/images/"+private, nil, bob); r.status != http.StatusNotFound {
		t.Errorf("bob sees alice's private image: %d", r.status)
	}
	if r := e.do("GET", "/v2/images/"+public, nil, bob); r.status != 200 {
		t.Errorf("bob cannot see public: %d", r.status)
	}
	if r := e.do("PATCH", "/v2/images/"+public, `[{"op":"replace","path":"/name","value":"x"}]`, bob, "Content-Type: "+patchV21); r.status != http.StatusForbidden {
		t.Errorf("bob modifies admin's public image: %d", r.status)
	}
	if r := e.do("DELETE", "/v2/images/"+public, nil, bob); r.status != http.StatusForbidden {
		t.Errorf("bob deletes admin's public image: %d", r.status)
	}

	// Sharing: pending shares are readable by id but not listed until accepted.
	if r := e.do("POST", "/v2/images/"+shared+"/members", map[string]any{"member": "proj-b"}, bob); r.status != http.StatusNotFound {
		t.Errorf("non-member adds members: %d", r.status)
	}
	r := e.do("POST", "/v2/images/"+shared+"/members", map[string]any{"member": "proj-b"}, alice)
	if r.status != 200 || r.json(t)["status"] != "pending" || r.json(t)["schema"] != "/v2/schemas/member" {
		t.Fatalf("add member: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v2/images/"+shared+"/members", map[string]any{"member": "proj-b"}, alice); r.status != http.StatusConflict {
		t.Errorf("duplicate member: %d", r.status)
	}
	check("bob", bob, "", "admin-public")
	check("bob", bob, "?member_status=pending&visibility=shared", "a-shared")
	if r := e.do("GET", "/v2/images/"+shared, nil, bob); r.status != 200 {
		t.Errorf("pending member reads image: %d", r.status)
	}
	if r := e.do("PUT", "/v2/images/"+shared+"/members/proj-b", map[string]any{"status": "accepted"}, alice); r.status != http.StatusForbidden {
		t.Errorf("owner accepts on member's behalf: %d", r.status)
	}
	if r := e.do("PUT", "/v2/images/"+shared+"/members/proj-b", map[string]any{"status": "bogus"}, bob); r.status != http.StatusBadRequest {
		t.Errorf("bad member status: %d", r.status)
	}
	if r := e.do("PUT", "/v2/images/"+shared+"/members/proj-b", map[string]any{"status": "accepted"}, bob); r.status != 200 {
		t.Fatalf("accept: %d %s", r.status, r.body)
	}
	check("bob", bob, "", "a-shared", "admin-public")
	check("carol", carol, "", "admin-public")
	if r := e.do("GET", "/v2/images/"+shared, nil, carol); r.status != http.StatusNotFound {
		t.Errorf("non-member sees shared image: %d", r.status)
	}
	if ms := e.do("GET", "/v2/images/"+shared+"/members", nil, alice).json(t)["members"].([]any); len(ms) != 1 {
		t.Errorf("members: %v", ms)
	}
	if r := e.do("DELETE", "/v2/images/"+shared+"/members/proj-b", nil, alice); r.status != 204 {
		t.Fatalf("remove member: %d", r.status)
	}
	check("bob", bob, "", "admin-public")
}

func TestDeactivatedDownloadNeedsAdmin(t *testing.T) {
	e := tokenEnv(t)
	alice, admin := "X-Auth-Token: alice-token", "X-Auth-Token: admin-token"
	id := e.create(map[string]any{"name": "d"}, alice)
	e.upload(id, []byte("bytes"), alice)
	if r := e.do("POST", "/v2/images/"+id+"/actions/deactivate", nil, alice); r.status != 204 {
		t.Fatalf("deactivate: %d", r.status)
	}
	if r := e.do("GET", "/v2/images/"+id+"/file", nil, alice); r.status != http.StatusForbidden {
		t.Errorf("owner downloads deactivated image: %d", r.status)
	}
	if r := e.do("GET", "/v2/images/"+id+"/file", nil, admin); r.status != 200 || string(r.body) != "bytes" {
		t.Errorf("admin download of deactivated image: %d", r.status)
	}
}
