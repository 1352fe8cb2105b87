package auth

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestParseTokens(t *testing.T) {
	tok, err := ParseTokens(strings.NewReader("# comment\n\nsecret-a projA admin,member\nsecret-b projB\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		header  string
		project string
		admin   bool
		err     bool
	}{
		{"secret-a", "projA", true, false},
		{"secret-b", "projB", false, false},
		{"wrong", "", false, true},
		{"", "", false, true},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		if c.header != "" {
			r.Header.Set("X-Auth-Token", c.header)
		}
		id, err := tok.Authenticate(r)
		if (err != nil) != c.err || id.Project != c.project || id.Admin != c.admin {
			t.Errorf("token %q: %+v, %v", c.header, id, err)
		}
	}
}

func TestParseTokensBadInput(t *testing.T) {
	for _, in := range []string{"", "# only comments\n", "onlytoken\n", "a b c d\n", "t p\nt q\n"} {
		if _, err := ParseTokens(strings.NewReader(in)); err == nil {
			t.Errorf("ParseTokens(%q) accepted", in)
		}
	}
}
