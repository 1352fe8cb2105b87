package client

import (
	"context"
	"net/url"
)

// Transfer is a transfer record of the Image API.
type Transfer struct {
	ID          string   `json:"id"`
	ImageID     string   `json:"image_id"`
	Size        int64    `json:"size"`
	TransferURL string   `json:"transfer_url"`
	Phase       string   `json:"phase"`
	Transferred int64    `json:"transferred"`
	Ops         []string `json:"ops"`
	Done        []struct {
		Start  int64 `json:"start"`
		Length int64 `json:"length"`
	} `json:"done_ranges"`
	BlockChecksum *struct {
		Algorithm string `json:"algorithm"`
		BlockSize int    `json:"block_size"`
		Checksum  string `json:"checksum"`
	} `json:"block_checksum"`
}

func transfersPath(imageID string) string {
	return "/v2/images/" + url.PathEscape(imageID) + "/transfers"
}

// CreateTransfer opens a read or write transfer.
func (c *Client) CreateTransfer(ctx context.Context, imageID, op string, size int64) (*Transfer, error) {
	var t Transfer
	body := map[string]any{"ops": []string{op}}
	if size > 0 {
		body["size"] = size
	}
	err := c.doJSON(ctx, "POST", transfersPath(imageID), "application/json", body, &t)
	return &t, err
}

// GetTransfer shows a transfer.
func (c *Client) GetTransfer(ctx context.Context, imageID, id string) (*Transfer, error) {
	var t Transfer
	err := c.doJSON(ctx, "GET", transfersPath(imageID)+"/"+id, "", nil, &t)
	return &t, err
}

// FinalizeTransfer publishes what a write transfer received.
func (c *Client) FinalizeTransfer(ctx context.Context, imageID, id string) (*Transfer, error) {
	var t Transfer
	err := c.doJSON(ctx, "POST", transfersPath(imageID)+"/"+id+"/finalize", "", nil, &t)
	return &t, err
}

// CancelTransfer discards a transfer.
func (c *Client) CancelTransfer(ctx context.Context, imageID, id string) error {
	return c.doJSON(ctx, "DELETE", transfersPath(imageID)+"/"+id, "", nil, nil)
}

// ListTransfers returns an image's transfers.
func (c *Client) ListTransfers(ctx context.Context, imageID string) ([]*Transfer, error) {
	var body struct {
		Transfers []*Transfer `json:"transfers"`
	}
	err := c.doJSON(ctx, "GET", transfersPath(imageID), "", nil, &body)
	return body.Transfers, err
}

// DoneBytes is how much of the image a resumed upload need not send.
func (t *Transfer) DoneBytes() int64 {
	var n int64
	for _, d := range t.Done {
		n += d.Length
	}
	return n
}
