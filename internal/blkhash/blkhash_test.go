package blkhash

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"golang.org/x/crypto/blake2b"
)

// reference computes the checksum the way imageio's Hash does, block by
// block with whole-block hashing, as the spec of the format.
func reference(data []byte, bs int) string {
	outer, _ := blake2b.New256(nil)
	for off := 0; off < len(data); off += bs {
		d := blake2b.Sum256(data[off:min(off+bs, len(data))])
		outer.Write(d[:])
	}
	return hex.EncodeToString(outer.Sum(nil))
}

func TestMatchesBlockByBlock(t *testing.T) {
	const bs = 64 << 10
	for _, size := range []int{0, 1, bs - 1, bs, bs + 1, 5*bs + 333} {
		data := make([]byte, size)
		rand.Read(data)
		h := New(bs)
		// Odd write sizes cross block boundaries.
		for p := data; len(p) > 0; {
			n := min(len(p), 7777)
			h.Write(p[:n])
			p = p[n:]
		}
		if got, want := h.HexSum(), reference(data, bs); got != want {
			t.Fatalf("size %d: %s, want %s", size, got, want)
		}
		if h.HexSum() != reference(data, bs) {
			t.Fatal("Sum changed the state")
		}
	}
}

func TestZeroEqualsWritingZeros(t *testing.T) {
	const bs = 64 << 10
	data := make([]byte, 3*bs+100)
	rand.Read(data[:bs/2])
	copy(data[2*bs+5:], []byte("tail data"))
	h := New(bs)
	h.Write(data[:bs/2])
	h.Zero(int64(2*bs + 5 - bs/2)) // a hole crossing whole blocks
	h.Write(data[2*bs+5:])
	if got, want := h.HexSum(), reference(data, bs); got != want {
		t.Fatalf("with Zero: %s, want %s", got, want)
	}
	if !bytes.Equal(digestOfZeros(bs), BlockDigest(make([]byte, bs))) {
		t.Fatal("precomputed zero digest is wrong")
	}
}

func TestParallelSumMatchesStream(t *testing.T) {
	const bs = 64 << 10
	data := make([]byte, 7*bs+99)
	rand.Read(data[:bs])
	rand.Read(data[5*bs:])
	// Bytes [bs, 5*bs) are zeros: say so for part of them, not all.
	holes := []Hole{{Off: bs + 100, Len: 3*bs - 100}}
	for _, w := range []int{1, 2, 5} {
		got, err := Sum(context.Background(), bytes.NewReader(data), int64(len(data)), holes, bs, w)
		if err != nil || got != reference(data, bs) {
			t.Fatalf("workers %d: %s, %v; want %s", w, got, err, reference(data, bs))
		}
	}
}
