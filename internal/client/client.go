// Package client is the Go client of Hangar's two HTTP faces: the Image API
// (catalog operations, whole-image streams) and the transfer API (parallel,
// sparse-aware uploads and downloads that send file bytes by sendfile).
// The hangar CLI is built on it.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Sentinel errors, for exit codes and messages.
var (
	ErrNotFound     = errors.New("not found")
	ErrUnauthorized = errors.New("authentication failed")
	ErrAmbiguous    = errors.New("more than one image has that name")
	ErrUnreachable  = errors.New("server unreachable")
)

// APIError is an error answer of the server.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// Unwrap maps statuses to the sentinels.
func (e *APIError) Unwrap() error {
	switch e.Status {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusUnauthorized:
		return ErrUnauthorized
	}
	return nil
}

// Client talks to one Hangar server.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// New returns a client of the server at baseURL (http://host:port).
func New(baseURL, token string) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid server URL %q: want http://HOST:PORT", baseURL)
	}
	// Enough idle connections for parallel ranged transfers to reuse them.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 32
	return &Client{base: u, token: token, http: &http.Client{Transport: tr}}, nil
}

func (c *Client) newRequest(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("X-Auth-Token", c.token)
	}
	return req, nil
}

// send runs a request and turns error answers into *APIError.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	res, err := c.http.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("%s: %w (%v)", c.base.Host, ErrUnreachable, err)
	}
	if res.StatusCode >= 400 {
		defer res.Body.Close()
		return nil, readAPIError(res)
	}
	return res, nil
}

func readAPIError(res *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var body struct{ Message string }
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &body) == nil && body.Message != "" {
		msg = body.Message
	}
	msg = strings.TrimSpace(strings.ReplaceAll(msg, "<br /><br />", ""))
	if msg == "" {
		msg = http.StatusText(res.StatusCode)
	}
	return &APIError{Status: res.StatusCode, Message: msg}
}

// doJSON sends body as JSON (with contentType) and decodes the answer.
func (c *Client) doJSON(ctx context.Context, method, path, contentType string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := c.newRequest(ctx, method, path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := c.send(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, res.Body)
		return err
	}
	return json.NewDecoder(res.Body).Decode(out)
}
