package transfer

import (
	"context"
	"hash"
	"sync"

	"hangar/internal/blkhash"
	"hangar/internal/storage"
)

// blockDigests keeps imageio block digests of the blocks that one write
// request covered whole, hashed from the request's own buffers as they
// passed (design: hashing off the critical path, no read-back). Finalize
// reads back only the blocks no single request covered.
//
// A digest is kept only if its write was alone on the block from start to
// end: a write that began while another touched the block, or a block that
// another write touched since, has no digest. The table is this server's
// memory: after a restart every block is read back.
type blockDigests struct {
	size  int64
	bs    int64
	trust bool // false: keep none (several servers write the transfer)

	mu     sync.Mutex
	blocks []blockState
}

type blockState struct {
	inflight int32
	gen      uint32
	valid    bool
	sum      []byte
}

func newBlockDigests(size int64, trust bool) *blockDigests {
	bs := int64(blkhash.BlockSize)
	return &blockDigests{size: size, bs: bs, trust: trust, blocks: make([]blockState, (size+bs-1)/bs)}
}

// writeTicket is one write's claim on the blocks it touches.
type writeTicket struct {
	first int
	gens  []uint32
	alone []bool // nobody else was writing the block when this write began
}

func (d *blockDigests) blockRange(off, n int64) (int, int) {
	if n == 0 {
		return 0, -1
	}
	return int(off / d.bs), int((off + n - 1) / d.bs)
}

// begin is called before a write or zero of [off, off+n).
func (d *blockDigests) begin(off, n int64) *writeTicket {
	first, last := d.blockRange(off, n)
	t := &writeTicket{first: first}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := first; i <= last; i++ {
		b := &d.blocks[i]
		t.alone = append(t.alone, b.inflight == 0)
		b.inflight++
		b.gen++
		b.valid, b.sum = false, nil
		t.gens = append(t.gens, b.gen)
	}
	return t
}

// end is called after the write, with the digests of the blocks it
// covered whole (by block index), or nil if it failed.
func (d *blockDigests) end(t *writeTicket, sums map[int][]byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, gen := range t.gens {
		i := t.first + k
		b := &d.blocks[i]
		b.inflight--
		if sum := sums[i]; sum != nil && t.alone[k] && b.gen == gen {
			b.valid, b.sum = true, sum
		}
	}
}

// known returns the digest of block i if a write recorded it.
func (d *blockDigests) known(i int) []byte {
	if !d.trust {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if b := d.blocks[i]; b.valid {
		return b.sum
	}
	return nil
}

// checksum is imageio's block checksum of the partial object: recorded
// digests, zero digests for blocks inside holes, and the rest read back
// and hashed on every core.
func (d *blockDigests) checksum(ctx context.Context, p storage.Partial) (string, error) {
	var holes []storage.Extent
	if ex, ok := p.(storage.Extenter); ok {
		exts, err := ex.Extents(ctx)
		if err != nil {
			return "", err
		}
		for _, e := range exts {
			if e.Zero {
				holes = append(holes, e)
			}
		}
	}
	zero := blkhash.ZeroDigest(int(d.bs))
	return blkhash.SumKnown(ctx, p, d.size, int(d.bs), 0, func(i int, off, n int64) []byte {
		if sum := d.known(i); sum != nil {
			return sum
		}
		if inHoles(holes, off, n) {
			if n == d.bs {
				return zero
			}
			return blkhash.ZeroDigest(int(n))
		}
		return nil
	})
}

func inHoles(holes []storage.Extent, off, n int64) bool {
	for _, h := range holes {
		if h.Offset <= off && off+n <= h.Offset+h.Length {
			return true
		}
	}
	return false
}

// blockFeeder hashes the blocks a write covers whole as its bytes pass.
type blockFeeder struct {
	d       *blockDigests
	h       hash.Hash
	hashing bool
	sums    map[int][]byte
}

func (d *blockDigests) feeder() *blockFeeder {
	if !d.trust { // nothing would use the digests: hash nothing
		return &blockFeeder{d: d}
	}
	return &blockFeeder{d: d, h: blkhash.NewBlock(), sums: map[int][]byte{}}
}

// write takes the bytes written at pos; writes must come in order.
func (f *blockFeeder) write(pos int64, p []byte) {
	for f.d.trust && len(p) > 0 {
		i := pos / f.d.bs
		start, end := i*f.d.bs, min((i+1)*f.d.bs, f.d.size)
		k := min(int64(len(p)), end-pos)
		if !f.hashing && pos == start {
			f.hashing = true
			f.h.Reset()
		}
		if f.hashing {
			f.h.Write(p[:k])
			if pos+k == end {
				f.sums[int(i)] = f.h.Sum(nil)
				f.hashing = false
			}
		}
		pos += k
		p = p[k:]
	}
}
