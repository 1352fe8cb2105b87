package imageio

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"testing"

	"hangar/internal/transfer"
)

// The checksums hashed while bytes arrive must equal those of the final
// bytes, also when a client rewrites a range it already sent (with other
// bytes), zeroes over data, or never writes a range at all.
func TestChecksumsFollowRewritesAndGaps(t *testing.T) {
	cases := []struct {
		name  string
		steps func(url string)
		want  func() []byte
	}{
		{"in order", func(url string) {
			put(t, url, 0, fill(1<<20, 'a'), "n")
			put(t, url, 1<<20, fill(1<<20, 'b'), "n")
		}, func() []byte { return append(fill(1<<20, 'a'), fill(1<<20, 'b')...) }},
		{"rewrite after hashing", func(url string) {
			put(t, url, 0, fill(2<<20, 'a'), "n")
			put(t, url, 4096, fill(4096, 'z'), "n")
		}, func() []byte {
			b := fill(2<<20, 'a')
			copy(b[4096:], fill(4096, 'z'))
			return b
		}},
		{"zero over data", func(url string) {
			put(t, url, 0, fill(2<<20, 'a'), "n")
			do(t, "PATCH", url, `{"op":"zero","offset":0,"size":1048576}`)
		}, func() []byte { return append(make([]byte, 1<<20), fill(1<<20, 'a')...) }},
		{"gap never written", func(url string) {
			put(t, url, 1<<20, fill(1<<20, 'c'), "n")
		}, func() []byte { return append(make([]byte, 1<<20), fill(1<<20, 'c')...) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, transfer.Config{})
			id := e.image()
			url, tr := e.ticket(id, 2<<20, "write")
			c.steps(url)
			if _, _, err := e.m.Finalize(context.Background(), tr.ID); err != nil {
				t.Fatal(err)
			}
			im, _ := e.cat.GetImage(context.Background(), id)
			sum := md5.Sum(c.want())
			if *im.Checksum != hex.EncodeToString(sum[:]) {
				t.Fatalf("checksum %s, want %s", *im.Checksum, hex.EncodeToString(sum[:]))
			}
		})
	}
}

func fill(n int, b byte) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}
