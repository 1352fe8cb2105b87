package imageio

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"

	"hangar/internal/blkhash"
	"hangar/internal/transfer"
)

// wop is one write request: data at off, or a zero op of n bytes.
type wop struct {
	off  int64
	data []byte
	zero int64
}

// Finalize's block checksum (from digests taken as requests pass, holes,
// and read-back) and the backfilled Glance checksum must equal those of the
// final bytes, whatever the order and shape of the writes: whole blocks,
// unaligned ranges, rewrites, zeroes over data, ranges never written, and
// a short last block.
func TestChecksumsFollowRewritesAndGaps(t *testing.T) {
	const bs = blkhash.BlockSize
	const size = 2*bs + bs/2
	cases := []struct {
		name string
		ops  []wop
	}{
		{"whole blocks in order", []wop{{off: 0, data: fill(bs, 'a')}, {off: bs, data: fill(bs, 'b')}, {off: 2 * bs, data: fill(bs/2, 'c')}}},
		{"whole blocks reversed", []wop{{off: 2 * bs, data: fill(bs/2, 'c')}, {off: bs, data: fill(bs, 'b')}, {off: 0, data: fill(bs, 'a')}}},
		{"one unaligned request", []wop{{off: 1000, data: fill(size-2000, 'u')}}},
		{"rewrite inside a hashed block", []wop{{off: 0, data: fill(2*bs, 'a')}, {off: 4096, data: fill(4096, 'z')}}},
		{"whole block rewritten", []wop{{off: 0, data: fill(bs, 'a')}, {off: 0, data: fill(bs, 'b')}}},
		{"zero over data", []wop{{off: 0, data: fill(2*bs, 'a')}, {off: 0, zero: bs}, {off: bs + 10, zero: 100}}},
		{"gap never written", []wop{{off: bs, data: fill(bs, 'g')}}},
		{"nothing written", nil},
		{"small requests", []wop{{off: 0, data: fill(bs/2, 'x')}, {off: bs / 2, data: fill(bs/2, 'y')}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, transfer.Config{})
			id := e.image()
			url, tr := e.ticket(id, size, "write")
			want := make([]byte, size)
			for _, o := range c.ops {
				apply(t, url, want, o)
			}
			checkFinal(t, e, id, tr.ID, want)
		})
	}
}

// Writers racing on the same blocks leave no digest behind that the
// final bytes do not have.
func TestChecksumsWithConcurrentOverlappingWriters(t *testing.T) {
	const bs = blkhash.BlockSize
	const size = 2 * bs
	e := newEnv(t, transfer.Config{})
	id := e.image()
	url, tr := e.ticket(id, size, "write")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			put(t, url, 0, fill(size, byte('a'+i)), "n")
		}()
	}
	wg.Wait()
	got := get(t, url, size) // whatever interleaving won is the final content
	checkFinal(t, e, id, tr.ID, got)
}

func apply(t *testing.T, url string, model []byte, o wop) {
	t.Helper()
	if o.zero > 0 {
		if r := do(t, "PATCH", url, fmt.Sprintf(`{"op":"zero","offset":%d,"size":%d}`, o.off, o.zero)); r.status != 200 {
			t.Fatalf("zero: %d", r.status)
		}
		clear(model[o.off : o.off+o.zero])
		return
	}
	put(t, url, o.off, o.data, "n")
	copy(model[o.off:], o.data)
}

func get(t *testing.T, url string, size int64) []byte {
	t.Helper()
	r := do(t, "GET", url, nil)
	if r.status != 200 || int64(len(r.body)) != size {
		t.Fatalf("GET: %d, %d bytes", r.status, len(r.body))
	}
	return r.body
}

func checkFinal(t *testing.T, e *env, id, tid string, want []byte) {
	t.Helper()
	if r := do(t, "PATCH", e.data+"/images/"+tid, `{"op":"flush"}`); r.status != 200 {
		t.Fatalf("flush: %d", r.status)
	}
	_, block, err := e.m.Finalize(context.Background(), tid)
	if err != nil {
		t.Fatal(err)
	}
	h := blkhash.New(blkhash.BlockSize)
	h.Write(want)
	if block != h.HexSum() {
		t.Fatalf("block checksum %s, want %s", block, h.HexSum())
	}
	im := e.st.WaitChecksums(t, id)
	sum := md5.Sum(want)
	if *im.Checksum != hex.EncodeToString(sum[:]) || *im.BlockChecksum != block {
		t.Fatalf("checksum %s, want %s; block %v", *im.Checksum, hex.EncodeToString(sum[:]), *im.BlockChecksum)
	}
}

func fill(n int, b byte) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}
