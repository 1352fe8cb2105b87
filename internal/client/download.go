package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"

	"hangar/internal/blkhash"
	"hangar/internal/catalog"
	"hangar/internal/sparse"
)

// DownloadFile writes the active image imageID to path through a read
// transfer: data extents as parallel ranged GETs written at their offsets,
// holes left as holes (the file is sparse), then a comparison of the
// file's block checksum with the server's. Progress is kept beside the
// file (path + ".hangar-download") until the end, so that an interrupted
// download run again fetches only the ranges it lacks.
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
	var exts []struct {
		Start, Length int64
		Zero          bool
	}
	if err := c.getJSON(ctx, t.TransferURL+"/extents?context=zero", &exts); err != nil {
		return t, err
	}
	st := loadState(path, imageID, t.Size, im.Str("checksum"))
	flags := os.O_RDWR | os.O_CREATE
	if len(st.Done) == 0 {
		flags |= os.O_TRUNC
	}
	out, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return t, err
	}
	defer out.Close()
	if err := out.Truncate(t.Size); err != nil { // holes where nothing is written
		return t, err
	}
	ops := make(chan op, len(exts)+len(st.Done)+16)
	for _, e := range exts {
		if e.Zero {
			count(opt.Progress, op{Off: e.Start, N: e.Length, Zero: true})
			continue
		}
		for _, r := range catalog.SubtractRanges(catalog.Range{Off: e.Start, Len: e.Length}, st.Done) {
			for off := r.Off; off < r.Off+r.Len; off += maxOp {
				ops <- op{Off: off, N: min(maxOp, r.Off+r.Len-off)}
			}
		}
	}
	close(ops)
	err = c.fetchAll(ctx, t.TransferURL, out, ops, opt, st)
	if serr := st.save(out); err == nil {
		err = serr
	}
	if err != nil {
		return t, err
	}
	if err := c.verifyDownload(ctx, t, out); err != nil {
		st.remove() // what it recorded cannot be trusted
		return t, err
	}
	st.remove()
	return t, nil
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

func (c *Client) fetchAll(ctx context.Context, u string, out *os.File, ops <-chan op, opt TransferOptions, st *downloadState) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, opt.Connections)
	for i := 0; i < opt.Connections; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range ops {
				if err := c.fetchRetry(ctx, u, out, o, opt); err != nil {
					errs <- err
					cancel()
					return
				}
				count(opt.Progress, o)
				st.add(out, o)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func (c *Client) fetchRetry(ctx context.Context, u string, out *os.File, o op, opt TransferOptions) error {
	tries := 0
	err := retry(ctx, opt.Retries, func() error {
		if tries++; tries > 1 {
			opt.Progress.Resent.Add(o.N)
		}
		return c.fetch(ctx, u, out, o)
	})
	if err != nil {
		return fmt.Errorf("range %d+%d: %w", o.Off, o.N, err)
	}
	return nil
}

// fetch GETs one range and writes it at its offset.
func (c *Client) fetch(ctx context.Context, u string, out *os.File, o op) error {
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
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	n, err := io.CopyBuffer(io.NewOffsetWriter(out, o.Off), io.LimitReader(res.Body, o.N), *bp)
	if err == nil && n != o.N {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// verifyDownload compares the written file's block checksum (holes cost
// nothing, blocks hashed on every core) with the server's.
func (c *Client) verifyDownload(ctx context.Context, t *Transfer, out *os.File) error {
	// The two checksums are computed at once: the server's over there, the
	// file's here.
	var got string
	var localErr error
	local := make(chan struct{})
	go func() {
		defer close(local)
		exts, err := sparse.Extents(out, t.Size)
		if err != nil {
			localErr = err
			return
		}
		got, localErr = blkhash.Sum(ctx, out, t.Size, holesOf(exts), blkhash.BlockSize, 0)
	}()
	var server struct{ Checksum string }
	err := c.getJSON(ctx, t.TransferURL+"/checksum", &server)
	<-local
	if err = errors.Join(err, localErr); err != nil {
		return err
	}
	if got != server.Checksum {
		return fmt.Errorf("downloaded image %s differs from the server's (block checksum %s, server %s)", t.ImageID, got, server.Checksum)
	}
	return nil
}
