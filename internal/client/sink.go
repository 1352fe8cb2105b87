package client

import (
	"io"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"hangar/internal/blkhash"
	"hangar/internal/storage"
)

const blockSize = blkhash.BlockSize

// sink is where a download's ranges land. It writes around the page cache
// (O_DIRECT) when a piece is aligned, as imageio's client does through
// qemu-nbd: on virtual machines filling the page cache costs more than the
// disk write. It also hashes every whole block as it passes, so that the
// download's block checksum needs no second read of the file.
type sink struct {
	out, direct *os.File
	size        int64
	digests     [][]byte
	gaps        atomic.Bool // some block was not hashed on the way
}

func newSink(out *os.File, path string, size int64) *sink {
	s := &sink{out: out, size: size, digests: make([][]byte, (size+blockSize-1)/blockSize)}
	if f, err := os.OpenFile(path, os.O_WRONLY|unix.O_DIRECT, 0); err == nil {
		s.direct = f
	}
	return s
}

func (s *sink) Close() {
	if s.direct != nil {
		s.direct.Close()
	}
}

var blockPool = sync.Pool{New: func() any { b := storage.AlignedBuffer(blockSize); return &b }}

// fill copies n bytes of body to offset off, block by block.
func (s *sink) fill(body io.Reader, off, n int64) error {
	bp := blockPool.Get().(*[]byte)
	defer blockPool.Put(bp)
	for end := off + n; off < end; {
		piece := min(blockSize-off%blockSize, end-off)
		b := (*bp)[:piece]
		if _, err := io.ReadFull(body, b); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if off%blockSize == 0 && (piece == blockSize || off+piece == s.size) {
			s.digests[off/blockSize] = blkhash.BlockDigest(b)
		} else {
			s.gaps.Store(true)
		}
		if err := s.write(b, off); err != nil {
			return err
		}
		off += piece
	}
	return nil
}

func (s *sink) write(b []byte, off int64) error {
	f := s.out
	if s.direct != nil && off%storage.BufferAlign == 0 && len(b)%storage.BufferAlign == 0 {
		f = s.direct
	}
	_, err := f.WriteAt(b, off)
	return err
}

// checksum is the file's block checksum from the digests taken on the
// way; blocks never fetched are holes. ok=false when some block was not
// seen whole (a resumed download), and the file must be read instead.
func (s *sink) checksum() (string, bool) {
	if s.gaps.Load() {
		return "", false
	}
	digests := make([][]byte, len(s.digests))
	zero := map[int64][]byte{} // hashing 4 MiB of zeros per hole block would cost seconds
	for i, d := range s.digests {
		if d == nil {
			n := min(blockSize, s.size-int64(i)*blockSize)
			if zero[n] == nil {
				zero[n] = blkhash.ZeroDigest(int(n))
			}
			d = zero[n]
		}
		digests[i] = d
	}
	return blkhash.Combine(digests), true
}
