package transfer

import (
	"bytes"
	"testing"

	"hangar/internal/blkhash"
)

// A digest is kept only for a block one write covered whole, alone, with
// no write touching the block since.
func TestBlockDigestsKeepOnlyWholeLoneWrites(t *testing.T) {
	const bs = blkhash.BlockSize
	block := func(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }
	write := func(d *blockDigests, off int64, data []byte) {
		tk := d.begin(off, int64(len(data)))
		f := d.feeder()
		for p, pos := data, off; len(p) > 0; { // in 1 MiB pieces, as copyIn
			n := min(len(p), 1<<20)
			f.write(pos, p[:n])
			p, pos = p[n:], pos+int64(n)
		}
		d.end(tk, f.sums)
	}
	cases := []struct {
		name  string
		run   func(d *blockDigests)
		known map[int][]byte // block → digest; absent: none
	}{
		{"whole blocks and the short last one", func(d *blockDigests) {
			write(d, 0, block('a', 2*bs+100))
		}, map[int][]byte{0: blkhash.BlockDigest(block('a', bs)), 1: blkhash.BlockDigest(block('a', bs)), 2: blkhash.BlockDigest(block('a', 100))}},
		{"unaligned start covers only later blocks", func(d *blockDigests) {
			write(d, 1, block('b', 2*bs))
		}, map[int][]byte{1: blkhash.BlockDigest(block('b', bs))}},
		{"a later partial write drops the digest", func(d *blockDigests) {
			write(d, 0, block('a', bs))
			write(d, 10, block('z', 5))
		}, nil},
		{"a later whole write replaces it", func(d *blockDigests) {
			write(d, 0, block('a', bs))
			write(d, 0, block('c', bs))
		}, map[int][]byte{0: blkhash.BlockDigest(block('c', bs))}},
		{"overlapping writes in flight keep none", func(d *blockDigests) {
			t1 := d.begin(0, bs)
			t2 := d.begin(0, bs)
			d.end(t1, map[int][]byte{0: {1}})
			d.end(t2, map[int][]byte{0: {2}})
		}, nil},
		{"a zero drops it", func(d *blockDigests) {
			write(d, 0, block('a', bs))
			d.end(d.begin(bs-1, 2), nil)
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newBlockDigests(2*bs+100, true)
			c.run(d)
			for i := range 3 {
				if got := d.known(i); !bytes.Equal(got, c.known[i]) {
					t.Errorf("block %d: digest %x, want %x", i, got, c.known[i])
				}
			}
		})
	}
}
