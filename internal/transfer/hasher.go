package transfer

import (
	"context"
	"io"
	"sync"

	"hangar/internal/blkhash"
	"hangar/internal/catalog"
	"hangar/internal/checksum"
	"hangar/internal/storage"
)

// prefixHasher computes a write transfer's checksums while its bytes
// arrive, so that finalize has little left to do (design: hashing off the
// critical path). It follows the contiguous prefix of completed ranges from
// offset 0 and hashes each new stretch of it from the partial object. A
// write that touches a range already completed may change bytes already
// hashed: the hasher then gives up and finalize hashes everything itself.
type prefixHasher struct {
	p    storage.Partial
	size int64

	mu        sync.Mutex
	completed []catalog.Range
	zeroed    []catalog.Range // completed by zero requests: hashed without reading
	hashed    int64
	invalid   bool

	stream *checksum.Stream
	blk    *blkhash.Hash
	wake   chan struct{}
	quit   chan struct{}
	done   chan struct{}
}

func newPrefixHasher(p storage.Partial, size int64) *prefixHasher {
	h := &prefixHasher{p: p, size: size, blk: blkhash.New(blkhash.BlockSize),
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	// The block hash is fed here, not by the stream, so that zeroed
	// ranges cost it one precomputed digest per block.
	h.stream = checksum.NewStream()
	go h.run()
	return h
}

func overlaps(rs []catalog.Range, off, n int64) bool {
	for _, r := range rs {
		if off < r.Off+r.Len && r.Off < off+n {
			return true
		}
	}
	return false
}

// begin is called before a write or zero of [off, off+n).
func (h *prefixHasher) begin(off, n int64) {
	h.mu.Lock()
	if overlaps(h.completed, off, n) {
		h.invalid = true
	}
	h.mu.Unlock()
}

// complete is called after [off, off+n) was written (or zeroed, zero=true).
func (h *prefixHasher) complete(off, n int64, zero bool) {
	h.mu.Lock()
	h.completed = catalog.AddRanges(h.completed, catalog.Range{Off: off, Len: n})
	if zero {
		h.zeroed = catalog.AddRanges(h.zeroed, catalog.Range{Off: off, Len: n})
	}
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// next returns the stretch to hash now, or ok=false to stop; zero tells
// whether the stretch is zeroed (bytes not read).
func (h *prefixHasher) next() (start, end int64, zero, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.invalid || h.hashed >= h.size {
		return 0, 0, false, false
	}
	if len(h.completed) > 0 && h.completed[0].Off == 0 {
		end = h.completed[0].Len
	}
	start = h.hashed
	for _, z := range h.zeroed { // cut the stretch at zeroed boundaries
		switch {
		case z.Off <= start && start < z.Off+z.Len:
			return start, min(end, z.Off+z.Len), true, true
		case z.Off > start:
			end = min(end, z.Off)
		}
	}
	return start, end, false, true
}

var zeros = make([]byte, 1<<20)

func (h *prefixHasher) run() {
	defer close(h.done)
	buf := storage.AlignedBuffer(1 << 20) // aligned: the store may read it O_DIRECT
	for {
		start, end, zero, ok := h.next()
		if !ok {
			return
		}
		if end <= start {
			select {
			case <-h.wake:
				continue
			case <-h.quit:
				return
			}
		}
		for off := start; off < end; {
			n := min(int64(len(buf)), end-off)
			if zero {
				h.stream.Write(zeros[:n])
				h.blk.Zero(n)
			} else {
				if _, err := h.p.ReadAt(buf[:n], off); err != nil && err != io.EOF {
					h.fail()
					return
				}
				h.stream.Write(buf[:n])
				h.blk.Write(buf[:n])
			}
			off += n
			h.mu.Lock()
			h.hashed, ok = off, !h.invalid
			h.mu.Unlock()
			select {
			case <-h.quit:
				return
			default:
			}
			if !ok {
				return
			}
		}
	}
}

func (h *prefixHasher) fail() {
	h.mu.Lock()
	h.invalid = true
	h.mu.Unlock()
}

// finish treats every byte not written as complete (a new partial object
// reads as zeros there), waits for the hasher to reach the end, and returns
// the sums, or ok=false if it gave up.
func (h *prefixHasher) finish(ctx context.Context) (checksum.Sums, string, bool) {
	h.complete(0, h.size, false)
	select {
	case <-h.done:
	case <-ctx.Done():
		h.stop()
		return checksum.Sums{}, "", false
	}
	h.mu.Lock()
	ok := !h.invalid && h.hashed == h.size
	h.mu.Unlock()
	sums := h.stream.Sums()
	if !ok {
		return checksum.Sums{}, "", false
	}
	return sums, h.blk.HexSum(), true
}

// stop ends the hasher without a result.
func (h *prefixHasher) stop() {
	select {
	case <-h.quit:
	default:
		close(h.quit)
	}
	<-h.done
	h.stream.Close()
}
