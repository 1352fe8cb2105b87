package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
)

// Image is an image record as the Image API returns it.
type Image map[string]any

// ID of the image.
func (im Image) ID() string { s, _ := im["id"].(string); return s }

// Str returns a string field or "".
func (im Image) Str(key string) string { s, _ := im[key].(string); return s }

// Size is the image size, -1 when unknown.
func (im Image) Size() int64 {
	if f, ok := im["size"].(float64); ok {
		return int64(f)
	}
	return -1
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// CreateImage creates an image with the given fields.
func (c *Client) CreateImage(ctx context.Context, fields map[string]any) (Image, error) {
	var im Image
	err := c.doJSON(ctx, "POST", "/v2/images", "application/json", fields, &im)
	return im, err
}

// GetImage returns one image.
func (c *Client) GetImage(ctx context.Context, id string) (Image, error) {
	var im Image
	err := c.doJSON(ctx, "GET", "/v2/images/"+url.PathEscape(id), "", nil, &im)
	return im, err
}

// ListImages returns every image the query selects, following next links.
func (c *Client) ListImages(ctx context.Context, q url.Values) ([]Image, error) {
	var all []Image
	next := "/v2/images"
	if len(q) > 0 {
		next += "?" + q.Encode()
	}
	for next != "" {
		var page struct {
			Images []Image `json:"images"`
			Next   string  `json:"next"`
		}
		if err := c.doJSON(ctx, "GET", next, "", nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Images...)
		next = page.Next
	}
	return all, nil
}

// Resolve finds an image by id or by unique name.
func (c *Client) Resolve(ctx context.Context, ref string) (Image, error) {
	if uuidRE.MatchString(ref) {
		return c.GetImage(ctx, ref)
	}
	ims, err := c.ListImages(ctx, url.Values{"name": {ref}})
	if err != nil {
		return nil, err
	}
	switch len(ims) {
	case 0:
		return nil, fmt.Errorf("image %q: %w", ref, ErrNotFound)
	case 1:
		return ims[0], nil
	}
	return nil, fmt.Errorf("image %q: %w; use its id", ref, ErrAmbiguous)
}

// PatchOp is one JSON-patch operation.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// UpdateImage applies JSON-patch operations.
func (c *Client) UpdateImage(ctx context.Context, id string, ops []PatchOp) (Image, error) {
	var im Image
	err := c.doJSON(ctx, "PATCH", "/v2/images/"+url.PathEscape(id), "application/openstack-images-v2.1-json-patch", ops, &im)
	return im, err
}

// DeleteImage deletes an image.
func (c *Client) DeleteImage(ctx context.Context, id string) error {
	return c.doJSON(ctx, "DELETE", "/v2/images/"+url.PathEscape(id), "", nil, nil)
}

// SetTag adds (or with remove, removes) a tag.
func (c *Client) SetTag(ctx context.Context, id, tag string, remove bool) error {
	method := "PUT"
	if remove {
		method = "DELETE"
	}
	return c.doJSON(ctx, method, "/v2/images/"+url.PathEscape(id)+"/tags/"+url.PathEscape(tag), "", nil, nil)
}

// UploadStream sends a whole image from a stream of unknown length
// (chunked), the path for stdin.
func (c *Client) UploadStream(ctx context.Context, id string, r io.Reader) error {
	req, err := c.newRequest(ctx, "PUT", "/v2/images/"+url.PathEscape(id)+"/file", io.NopCloser(r))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	res, err := c.send(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	return nil
}

// DownloadStream writes a whole image to w in order; it returns the bytes
// written and the server's Content-MD5.
func (c *Client) DownloadStream(ctx context.Context, id string, w io.Writer) (int64, string, error) {
	req, err := c.newRequest(ctx, "GET", "/v2/images/"+url.PathEscape(id)+"/file", nil)
	if err != nil {
		return 0, "", err
	}
	res, err := c.send(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNoContent {
		return 0, "", fmt.Errorf("image %s has no data yet", id)
	}
	n, err := io.Copy(w, res.Body)
	if err == nil && res.ContentLength >= 0 && n != res.ContentLength {
		err = fmt.Errorf("download ended after %d of %s bytes", n, strconv.FormatInt(res.ContentLength, 10))
	}
	return n, res.Header.Get("Content-MD5"), err
}
