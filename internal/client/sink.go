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

// pipeline is how many blocks of one connection are hashed and written
// while the next is received: hashing (BLAKE2b, ≈1 GB/s a core) is the
// slowest stage, so two blocks in flight keep both cores on it.
const pipeline = 2

// fill copies n bytes of body to offset off, block by block. Each block is
// hashed and written on goroutines of its own while the next ones arrive,
// so one connection's receive, hashing and disk writes overlap.
func (s *sink) fill(body io.Reader, off, n int64) error {
	var bufs [pipeline + 1]*[]byte
	var jobs [pipeline + 1]chan error
	for i := range bufs {
		bufs[i] = blockPool.Get().(*[]byte)
		defer blockPool.Put(bufs[i])
	}
	var failed error
	wait := func(i int) {
		if jobs[i] != nil {
			if err := <-jobs[i]; err != nil && failed == nil {
				failed = err
			}
			jobs[i] = nil
		}
	}
	defer func() { // no job may outlive its buffer
		for i := range jobs {
			wait(i)
		}
	}()
	for k, end := 0, off+n; off < end && failed == nil; k++ {
		slot := k % len(bufs)
		wait(slot)
		piece := min(blockSize-off%blockSize, end-off)
		b := (*bufs[slot])[:piece]
		if _, err := io.ReadFull(body, b); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		jobs[slot] = make(chan error, 1)
		go func(b []byte, off int64, done chan<- error) { done <- s.store(b, off) }(b, off, jobs[slot])
		off += piece
	}
	for i := range jobs {
		wait(i)
	}
	return failed
}

// store writes a piece and, if it is a whole block, hashes it meanwhile.
func (s *sink) store(b []byte, off int64) error {
	if off%blockSize != 0 || (int64(len(b)) != blockSize && off+int64(len(b)) != s.size) {
		s.gaps.Store(true)
		return s.write(b, off)
	}
	hashed := make(chan struct{})
	go func() {
		s.digests[off/blockSize] = blkhash.BlockDigest(b)
		close(hashed)
	}()
	err := s.write(b, off)
	<-hashed
	return err
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
