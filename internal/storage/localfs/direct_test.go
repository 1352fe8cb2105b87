package localfs

import (
	"bytes"
	"context"
	"crypto/rand"
	"testing"

	"hangar/internal/storage"
)

// Aligned partial writes take the O_DIRECT descriptor, unaligned ones the
// buffered one, and the bytes read back the same whichever way they went.
func TestDirectAndBufferedWritesMix(t *testing.T) {
	s, err := New(context.Background(), Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	aligned := storage.AlignedBuffer(1 << 20)
	rand.Read(aligned)
	tail := []byte("an unaligned tail")

	p, err := s.OpenPartial(context.Background(), "rand", 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.(*partial).direct == nil {
		t.Skip("file system refuses O_DIRECT; the buffered path is covered by the conformance suite")
	}
	if directPrefix(p.(*partial).direct, aligned, 0) != len(aligned) {
		t.Fatal("an aligned 1 MiB buffer at offset 0 does not go direct")
	}
	p.WriteAt(aligned, 2<<20)
	p.WriteAt(tail, 100)               // buffered, unaligned
	p.WriteAt(aligned[:8192+5], 1<<20) // direct head, buffered tail
	buf := make([]byte, 4<<20)
	p.ReadAt(buf, 0)
	exp := make([]byte, 4<<20)
	copy(exp[2<<20:], aligned)
	copy(exp[100:], tail)
	copy(exp[1<<20:], aligned[:8192+5])
	if !bytes.Equal(buf, exp) {
		t.Fatal("random mix of direct and buffered writes read back wrong")
	}
}
