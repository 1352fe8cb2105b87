// Package blkhash computes the block checksum ovirt-imageio defines for
// disk images: the image is cut into fixed blocks (4 MiB by default), each
// block is hashed with BLAKE2b-256, and the result is the BLAKE2b-256 of
// those digests in order. Blocks are independent, so they can be hashed in
// parallel, and a block known to be zeros (a hole) costs one precomputed
// digest instead of hashing 4 MiB of zeros. The value equals what
// ovirt_imageio.client.checksum() computes for the same bytes.
package blkhash

import (
	"encoding"
	"encoding/hex"
	"hash"

	"golang.org/x/crypto/blake2b"
)

// Defaults, as imageio's.
const (
	BlockSize = 4 << 20
	Algorithm = "blake2b"
)

// Hash is a hash.Hash over a stream of bytes, cut into blocks as they come.
// Not safe for concurrent use.
type Hash struct {
	blockSize int
	outer     hash.Hash
	block     hash.Hash // digest of the block being filled
	filled    int
	zeroSum   []byte
}

var _ hash.Hash = (*Hash)(nil)

// New returns a block hash with blocks of blockSize bytes.
func New(blockSize int) *Hash {
	h := &Hash{blockSize: blockSize, outer: new256(), block: new256()}
	h.zeroSum = digestOfZeros(blockSize)
	return h
}

func new256() hash.Hash {
	h, _ := blake2b.New256(nil)
	return h
}

var zeros = make([]byte, 1<<20)

func digestOfZeros(n int) []byte {
	h := new256()
	for n > 0 {
		m := min(n, len(zeros))
		h.Write(zeros[:m])
		n -= m
	}
	return h.Sum(nil)
}

// Write hashes p, closing blocks at every block boundary.
func (h *Hash) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		m := min(len(p), h.blockSize-h.filled)
		h.block.Write(p[:m])
		h.filled += m
		p = p[m:]
		if h.filled == h.blockSize {
			h.closeBlock()
		}
	}
	return n, nil
}

func (h *Hash) closeBlock() {
	h.outer.Write(h.block.Sum(nil))
	h.block.Reset()
	h.filled = 0
}

// Zero hashes n zero bytes; whole aligned blocks use the precomputed digest.
func (h *Hash) Zero(n int64) {
	if h.filled > 0 { // finish the open block byte by byte
		m := min(n, int64(h.blockSize-h.filled))
		for m > 0 {
			k := min(m, int64(len(zeros)))
			h.Write(zeros[:k])
			m -= k
			n -= k
		}
	}
	for n >= int64(h.blockSize) {
		h.outer.Write(h.zeroSum)
		n -= int64(h.blockSize)
	}
	for n > 0 {
		k := min(n, int64(len(zeros)))
		h.Write(zeros[:k])
		n -= k
	}
}

// AddBlockDigest adds the digest of one whole block computed elsewhere (a
// parallel worker); blocks must be added in order, at a block boundary.
func (h *Hash) AddBlockDigest(d []byte) { h.outer.Write(d) }

// BlockDigest hashes one block on its own, for parallel workers.
func BlockDigest(block []byte) []byte {
	s := blake2b.Sum256(block)
	return s[:]
}

// Sum appends the checksum; a trailing partial block counts as a block.
// It does not change the state (the outer digest is cloned).
func (h *Hash) Sum(b []byte) []byte {
	if h.filled == 0 {
		return h.outer.Sum(b)
	}
	// x/crypto's blake2b is not a hash.Cloner, but it marshals its state.
	state, err := h.outer.(encoding.BinaryMarshaler).MarshalBinary()
	c := new256()
	if err == nil {
		err = c.(encoding.BinaryUnmarshaler).UnmarshalBinary(state)
	}
	if err != nil {
		panic("blkhash: cannot copy blake2b state: " + err.Error())
	}
	c.Write(h.block.Sum(nil))
	return c.Sum(b)
}

// Reset implements hash.Hash.
func (h *Hash) Reset() {
	h.outer.Reset()
	h.block.Reset()
	h.filled = 0
}

// Size implements hash.Hash.
func (h *Hash) Size() int { return blake2b.Size256 }

// BlockSize implements hash.Hash: the block size of the image blocks.
func (h *Hash) BlockSize() int { return h.blockSize }

// HexSum is Sum as lower-case hex, the form imageio reports.
func (h *Hash) HexSum() string { return hex.EncodeToString(h.Sum(nil)) }

// ZeroDigest is the digest of one block of n zero bytes.
func ZeroDigest(n int) []byte { return digestOfZeros(n) }

// Combine is the checksum of blocks whose digests are given in order.
func Combine(digests [][]byte) string {
	outer := new256()
	for _, d := range digests {
		outer.Write(d)
	}
	return hex.EncodeToString(outer.Sum(nil))
}

// NewBlock returns the hash of one block, for digests taken elsewhere
// (AddBlockDigest, SumKnown).
func NewBlock() hash.Hash { return new256() }
