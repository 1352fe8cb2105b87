package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"time"

	"hangar/internal/blkhash"
	"hangar/internal/catalog"
	"hangar/internal/sparse"
)

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }

// TransferOptions tune an upload or download.
type TransferOptions struct {
	Connections int // default 4, capped by the server's max_writers/max_readers
	Retries     int // per range, for transient failures; default 5
	Progress    *Progress
	// Resume continues this write transfer, skipping its done ranges.
	Resume *Transfer
	// FlushEvery is how many bytes a connection sends between flushes; a
	// flush is what makes the server record ranges as done (default 256 MiB).
	FlushEvery int64
}

func (o *TransferOptions) defaults() {
	if o.Connections <= 0 {
		o.Connections = 4
	}
	if o.Retries <= 0 {
		o.Retries = 5
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = 256 << 20
	}
	if o.Progress == nil {
		o.Progress = &Progress{}
	}
	if o.Progress.Started.IsZero() {
		o.Progress.Started = time.Now()
	}
}

// Transient reports failures worth retrying or resuming: the network, 5xx.
func Transient(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status >= 500
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, ErrUnreachable) || isConnReset(err)
}

// UploadFile sends path's bytes into the queued image imageID through a
// write transfer: data ranges by sendfile over several connections, holes
// and zero blocks as zero requests, then flush, finalize, and a comparison
// of the server's block checksum with the one computed while reading.
func (c *Client) UploadFile(ctx context.Context, imageID, path string, opt TransferOptions) (*Transfer, error) {
	opt.defaults()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	opt.Progress.Total = size
	t := opt.Resume
	if t == nil {
		if t, err = c.CreateTransfer(ctx, imageID, "write", size); err != nil {
			return nil, err
		}
	} else if t.Size != size {
		return t, fmt.Errorf("cannot resume: the transfer is for %d bytes, the file has %d", t.Size, size)
	}
	u, err := url.Parse(t.TransferURL)
	if err != nil {
		return t, err
	}
	local, err := c.sendAll(ctx, u, path, f, size, opt)
	if err != nil {
		return t, err
	}
	fin, err := c.FinalizeTransfer(ctx, imageID, t.ID)
	if err != nil {
		return t, err
	}
	if fin.BlockChecksum == nil || fin.BlockChecksum.Checksum != local {
		return fin, fmt.Errorf("the server's checksum of image %s differs from the file's (%v vs %s)", imageID, fin.BlockChecksum, local)
	}
	return fin, nil
}

// sendAll plans the file and runs the workers; it returns the file's block
// checksum.
func (c *Client) sendAll(ctx context.Context, u *url.URL, path string, f *os.File, size int64, opt TransferOptions) (string, error) {
	maxWriters, err := c.maxWriters(ctx, u, opt)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	exts, err := sparse.Extents(f, size)
	if err != nil {
		return "", err
	}
	ops := make(chan op, 64)
	var sum string
	var planErr, sumErr error
	var helpers sync.WaitGroup
	helpers.Add(2)
	go func() {
		defer helpers.Done()
		planErr = planUpload(ctx, f, exts, min(maxOp, opt.FlushEvery), resumeDone(opt.Resume), ops)
	}()
	go func() { // the file's block checksum, to compare with the server's
		defer helpers.Done()
		sum, sumErr = blkhash.Sum(ctx, f, size, holesOf(exts), blkhash.BlockSize, 0)
	}()
	sendErr := c.runWorkers(ctx, cancel, min(opt.Connections, maxWriters), func() error {
		return c.sendWorker(ctx, u, path, ops, opt)
	})
	helpers.Wait()
	if err := errors.Join(sendErr, planErr, sumErr); err != nil {
		return "", err
	}
	return sum, retry(ctx, opt.Retries, func() error { return c.flush(u) })
}

// maxWriters asks the transfer URL how many connections may write.
func (c *Client) maxWriters(ctx context.Context, u *url.URL, opt TransferOptions) (int, error) {
	var n int
	err := retry(ctx, opt.Retries, func() error {
		probe, err := dialData(u)
		if err != nil {
			return err
		}
		defer probe.Close()
		n, _, err = probe.options()
		return err
	})
	return n, err
}

// runWorkers runs n copies of work; the first failure cancels the others.
func (c *Client) runWorkers(ctx context.Context, cancel context.CancelFunc, n int, work func() error) error {
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := work(); err != nil {
				errs <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func resumeDone(t *Transfer) []catalog.Range {
	if t == nil {
		return nil
	}
	done := make([]catalog.Range, len(t.Done))
	for i, d := range t.Done {
		done[i] = catalog.Range{Off: d.Start, Len: d.Length}
	}
	return done
}

func (c *Client) flush(u *url.URL) error {
	d, err := dialData(u)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.flush()
}

// sendWorker sends ops on its own connection and its own file descriptor.
func (c *Client) sendWorker(ctx context.Context, u *url.URL, path string, ops <-chan op, opt TransferOptions) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var d *dataConn
	defer func() {
		if d != nil {
			d.Close()
		}
	}()
	var sinceFlush int64
	for o := range ops {
		for attempt := 0; ; attempt++ {
			if d == nil {
				if d, err = dialData(u); err != nil {
					if attempt < opt.Retries && ctx.Err() == nil {
						backoff(ctx, attempt)
						continue
					}
					return err
				}
			}
			if err = sendOp(d, f, o); err == nil {
				break
			}
			d.Close()
			d = nil
			if !Transient(err) || attempt >= opt.Retries || ctx.Err() != nil {
				return fmt.Errorf("range %d+%d: %w", o.Off, o.N, err)
			}
			if !o.Zero {
				opt.Progress.Resent.Add(o.N)
			}
			backoff(ctx, attempt)
		}
		count(opt.Progress, o)
		if sinceFlush += o.N; !o.Zero && sinceFlush >= opt.FlushEvery {
			// Durable progress: what a resumed upload will not resend.
			if err := d.flush(); err != nil {
				return fmt.Errorf("flush: %w", err)
			}
			sinceFlush = 0
		}
	}
	return nil
}

func sendOp(d *dataConn, f *os.File, o op) error {
	if o.Zero {
		return d.zero(o.Off, o.N)
	}
	return d.put(f, o.Off, o.N)
}

func count(p *Progress, o op) {
	if o.Zero {
		p.Zero.Add(o.N)
		p.ZeroOps.Add(1)
	} else {
		p.Data.Add(o.N)
		p.DataOps.Add(1)
	}
}

func holesOf(exts []sparse.Extent) []blkhash.Hole {
	var holes []blkhash.Hole
	for _, e := range exts {
		if e.Hole {
			holes = append(holes, blkhash.Hole{Off: e.Offset, Len: e.Length})
		}
	}
	return holes
}

// retry runs fn until it succeeds, fails for good, or attempts retries
// have failed transiently, backing off between tries.
func retry(ctx context.Context, attempts int, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || !Transient(err) || attempt >= attempts || ctx.Err() != nil {
			return err
		}
		backoff(ctx, attempt)
	}
}

// backoff waits 0.2 s, 0.4 s, … up to 5 s.
func backoff(ctx context.Context, attempt int) {
	d := min(200*time.Millisecond<<attempt, 5*time.Second)
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
