// Package auth decides who a request comes from. Two modes: none (a local
// run: every request is an admin context without a project, as Glance's
// unauthenticated-context pipeline makes it) and tokens (X-Auth-Token looked
// up in a tokens file that maps each token to a project and roles).
package auth

import (
	"bufio"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
)

// ErrUnauthenticated is a request without a valid token.
var ErrUnauthenticated = errors.New("unauthenticated")

// Identity is the caller of one request.
type Identity struct {
	Project string // "" without auth: images get a null owner
	Roles   []string
	// Admin is Glance's is_admin context flag: it bypasses ownership and
	// visibility checks. Policies that name the admin role (publicizing an
	// image) check HasRole("admin") instead, as Glance does.
	Admin bool
}

// HasRole reports whether the identity carries role.
func (id Identity) HasRole(role string) bool { return slices.Contains(id.Roles, role) }

// Authenticator resolves a request to an identity.
type Authenticator interface {
	Authenticate(r *http.Request) (Identity, error)
}

// None admits everyone as an admin context with no project and no roles.
type None struct{}

// Authenticate implements Authenticator.
func (None) Authenticate(*http.Request) (Identity, error) { return Identity{Admin: true}, nil }

// Tokens checks X-Auth-Token against a fixed table.
type Tokens struct {
	byToken map[string]Identity
}

// Authenticate implements Authenticator.
func (t *Tokens) Authenticate(r *http.Request) (Identity, error) {
	tok := r.Header.Get("X-Auth-Token")
	if tok == "" {
		return Identity{}, ErrUnauthenticated
	}
	for k, id := range t.byToken {
		if subtle.ConstantTimeCompare([]byte(k), []byte(tok)) == 1 {
			return id, nil
		}
	}
	return Identity{}, ErrUnauthenticated
}

// LoadTokens reads a tokens file.
func LoadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	defer f.Close()
	t, err := ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("auth: %s: %w", path, err)
	}
	return t, nil
}

// ParseTokens reads lines of "TOKEN PROJECT [ROLE,ROLE…]"; blank lines and
// lines starting with # are skipped. A token with the admin role is an
// admin context.
func ParseTokens(r io.Reader) (*Tokens, error) {
	t := &Tokens{byToken: map[string]Identity{}}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) < 2 || len(fields) > 3 {
			return nil, fmt.Errorf("line %d: want TOKEN PROJECT [ROLES], got %d fields", line, len(fields))
		}
		id := Identity{Project: fields[1]}
		if len(fields) == 3 {
			id.Roles = strings.Split(fields[2], ",")
		}
		id.Admin = id.HasRole("admin")
		if _, dup := t.byToken[fields[0]]; dup {
			return nil, fmt.Errorf("line %d: duplicate token", line)
		}
		t.byToken[fields[0]] = id
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.byToken) == 0 {
		return nil, errors.New("no tokens")
	}
	return t, nil
}
