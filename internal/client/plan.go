package client

import (
	"bytes"
	"context"
	"io"
	"os"

	"hangar/internal/blkhash"
	"hangar/internal/catalog"
	"hangar/internal/sparse"
)

// op is one request of a transfer: send [Off, Off+N) as data, or zero it.
type op struct {
	Off, N int64
	Zero   bool
}

// maxOp bounds one data request, so work spreads over the connections and
// a retry resends little. Uploads also keep requests within the flush
// interval, which bounds what a resume sends again.
const maxOp = 64 << 20

// planUpload maps f (whose extents are exts) into data and zero ops: holes
// from SEEK_DATA/SEEK_HOLE, and all-zero blocks inside data found by
// reading them. Ops are sent on out as soon as they are known, so sending
// starts before the whole file is read. Ranges in done (already received by
// the server, when resuming) are not sent again.
func planUpload(ctx context.Context, f *os.File, exts []sparse.Extent, opSize int64, done []catalog.Range, out chan<- op) error {
	defer close(out)
	var pending op
	emit := func(o op) error {
		if pending.N > 0 && pending.Zero == o.Zero && pending.Off+pending.N == o.Off && (o.Zero || pending.N+o.N <= opSize) {
			pending.N += o.N
			return nil
		}
		for _, r := range catalog.SubtractRanges(catalog.Range{Off: pending.Off, Len: pending.N}, done) {
			select {
			case out <- op{Off: r.Off, N: r.Len, Zero: pending.Zero}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		pending = o
		return nil
	}
	buf := make([]byte, blkhash.BlockSize)
	for _, e := range exts {
		if e.Hole {
			if err := emit(op{Off: e.Offset, N: e.Length, Zero: true}); err != nil {
				return err
			}
			continue
		}
		if err := planData(f, e, buf, emit); err != nil {
			return err
		}
	}
	return emit(op{}) // flush the last pending op
}

// planData reads a data extent in blocks aligned to the checksum's blocks.
func planData(f *os.File, e sparse.Extent, buf []byte, emit func(op) error) error {
	bs := int64(len(buf))
	for off := e.Offset; off < e.Offset+e.Length; {
		n := min(bs-off%bs, e.Offset+e.Length-off)
		b := buf[:n]
		if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
			return err
		}
		if err := emit(op{Off: off, N: n, Zero: isZero(b)}); err != nil {
			return err
		}
		off += n
	}
	return nil
}

var zeroPage = make([]byte, 64<<10)

func isZero(b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), len(zeroPage))
		if !bytes.Equal(b[:n], zeroPage[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}
