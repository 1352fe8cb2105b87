package client

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"hangar/internal/blkhash"
	"hangar/internal/catalog"
	"hangar/internal/sparse"
)

// DownloadFile writes the active image imageID to path through a read
// transfer: data blocks as parallel ranged GETs written at their offsets,
// holes left as holes (the file is sparse), then a comparison of the
// file's block checksum (taken as the bytes pass) with the server's.
// Progress is kept beside the file (path + ".hangar-download") until the
// end, so that an interrupted download run again fetches only what it
// lacks.
func (c *Client) DownloadFile(ctx context.Context, imageID, path string, opt TransferOptions) (*Transfer, error) {
	opt.defaults()
	im, err := c.GetImage(ctx, imageID)
	if err != nil {
		return nil, err
	}
	t, err := c.CreateTransfer(ctx, imageID, "read", 0)
	if err != nil {
		return nil, err
	}
	defer c.FinalizeTransfer(context.WithoutCancel(ctx), imageID, t.ID)
	opt.Progress.Total = t.Size
	server := c.serverChecksum(ctx, t) // computed there while we download
	var exts []struct {
		Start, Length int64
		Zero          bool
	}
	if err := c.getJSON(ctx, t.TransferURL+"/extents?context=zero", &exts); err != nil {
		return t, err
	}
	st := loadState(path, imageID, t.Size, im.Str("checksum"))
	out, err := openOutput(path, t.Size, len(st.Done) == 0)
	if err != nil {
		return t, err
	}
	defer out.Close()
	sk := newSink(out, path, t.Size)
	defer sk.Close()
	if len(st.Done) > 0 {
		sk.gaps.Store(true) // skipped blocks were not hashed on the way
	}
	ops := downloadOps(exts, t.Size, st.Done, opt.Progress)
	err = c.fetchAll(ctx, t.TransferURL, sk, ops, opt, st)
	if serr := st.save(out); err == nil {
		err = serr
	}
	if err != nil {
		return t, err
	}
	if err := c.verifyDownload(ctx, t, sk, <-server); err != nil {
		st.remove() // what it recorded cannot be trusted
		return t, err
	}
	st.remove()
	return t, nil
}

func openOutput(path string, size int64, fresh bool) (*os.File, error) {
	flags := os.O_RDWR | os.O_CREATE
	if fresh {
		flags |= os.O_TRUNC
	}
	out, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, err
	}
	if err := out.Truncate(size); err != nil { // holes where nothing is written
		out.Close()
		return nil, err
	}
	return out, nil
}

// downloadOps turns extents into ranged requests covering every block
// that holds data, whole blocks (so each can be hashed on the way), minus
// what a resumed download has already.
func downloadOps(exts []struct {
	Start, Length int64
	Zero          bool
}, size int64, done []catalog.Range, p *Progress) <-chan op {
	var data []catalog.Range
	for _, e := range exts {
		if e.Zero {
			continue
		}
		start := e.Start / blockSize * blockSize
		end := min((e.Start+e.Length+blockSize-1)/blockSize*blockSize, size)
		data = catalog.AddRanges(data, catalog.Range{Off: start, Len: end - start})
	}
	var covered int64
	var list []op
	for _, d := range data {
		covered += d.Len
		for _, r := range catalog.SubtractRanges(d, done) {
			for off := r.Off; off < r.Off+r.Len; off += maxOp {
				list = append(list, op{Off: off, N: min(maxOp, r.Off+r.Len-off)})
			}
		}
	}
	p.Zero.Add(size - covered) // holes are done already: the file starts as one
	// Every op is known: a channel that holds them all never blocks a
	// sender, whenever the workers stop.
	ops := make(chan op, len(list))
	for _, o := range list {
		ops <- o
	}
	close(ops)
	return ops
}

// serverChecksum asks for the server's block checksum in the background.
func (c *Client) serverChecksum(ctx context.Context, t *Transfer) <-chan checksumResult {
	res := make(chan checksumResult, 1)
	go func() {
		var body struct{ Checksum string }
		err := c.getJSON(ctx, t.TransferURL+"/checksum", &body)
		res <- checksumResult{body.Checksum, err}
	}()
	return res
}

type checksumResult struct {
	sum string
	err error
}

// getJSON GETs a JSON document of the data path, retrying transient
// failures like the ranges do.
func (c *Client) getJSON(ctx context.Context, u string, v any) error {
	return retry(ctx, 5, func() error { return c.getJSONOnce(ctx, u, v) })
}

func (c *Client) getJSONOnce(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return err
	}
	res, err := c.send(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	return jsonDecode(res.Body, v)
}

func (c *Client) fetchAll(ctx context.Context, u string, sk *sink, ops <-chan op, opt TransferOptions, st *downloadState) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return c.runWorkers(ctx, cancel, opt.Connections, func() error {
		for o := range ops {
			if err := c.fetchRetry(ctx, u, sk, o, opt); err != nil {
				return err
			}
			count(opt.Progress, o)
			st.add(sk.out, o)
		}
		return nil
	})
}

func (c *Client) fetchRetry(ctx context.Context, u string, sk *sink, o op, opt TransferOptions) error {
	tries := 0
	err := retry(ctx, opt.Retries, func() error {
		if tries++; tries > 1 {
			opt.Progress.Resent.Add(o.N)
		}
		return c.fetch(ctx, u, sk, o)
	})
	if err != nil {
		return fmt.Errorf("range %d+%d: %w", o.Off, o.N, err)
	}
	return nil
}

// fetch GETs one range and writes it at its offset.
func (c *Client) fetch(ctx context.Context, u string, sk *sink, o op) error {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", o.Off, o.Off+o.N-1))
	res, err := c.send(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusPartialContent {
		return fmt.Errorf("ranged GET answered %s", res.Status)
	}
	return sk.fill(res.Body, o.Off, o.N)
}

// verifyDownload compares the file's block checksum with the server's:
// from the digests taken on the way, or (for a resumed download) by reading
// the file, blocks hashed on every core and holes not read.
func (c *Client) verifyDownload(ctx context.Context, t *Transfer, sk *sink, server checksumResult) error {
	if server.err != nil {
		return server.err
	}
	got, ok := sk.checksum()
	if !ok {
		exts, err := sparse.Extents(sk.out, t.Size)
		if err != nil {
			return err
		}
		if got, err = blkhash.Sum(ctx, sk.out, t.Size, holesOf(exts), blkhash.BlockSize, 0); err != nil {
			return err
		}
	}
	if got != server.sum {
		return fmt.Errorf("downloaded image %s differs from the server's (block checksum %s, server %s)", t.ImageID, got, server.sum)
	}
	return nil
}
