package blkhash

import (
	"context"
	"io"
	"runtime"
	"sync"
)

// Hole is a range known to read as zeros.
type Hole struct{ Off, Len int64 }

// Sum computes the checksum of size bytes of r with blocks hashed in
// parallel on workers goroutines (0: one per CPU). Blocks entirely inside
// holes are not read: they take the precomputed zero-block digest. This is
// the same value as New(blockSize) fed the bytes in order.
func Sum(ctx context.Context, r io.ReaderAt, size int64, holes []Hole, blockSize, workers int) (string, error) {
	zero := digestOfZeros(blockSize)
	return SumKnown(ctx, r, size, blockSize, workers, func(_ int, off, n int64) []byte {
		if n == int64(blockSize) && inHole(holes, off, n) {
			return zero
		}
		return nil
	})
}

// SumKnown is Sum where known gives the digest of block i ([off, off+n))
// when it is known without reading (a hole, or hashed as it was written),
// or nil; only the blocks without one are read and hashed.
func SumKnown(ctx context.Context, r io.ReaderAt, size int64, blockSize, workers int, known func(i int, off, n int64) []byte) (string, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	bs := int64(blockSize)
	nblocks := int((size + bs - 1) / bs)
	digests := make([][]byte, nblocks)
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := range next {
				if buf == nil {
					buf = make([]byte, blockSize)
				}
				off := int64(i) * bs
				n := min(bs, size-off)
				if _, err := r.ReadAt(buf[:n], off); err != nil && err != io.EOF {
					once.Do(func() { firstErr = err })
					continue
				}
				digests[i] = BlockDigest(buf[:n])
			}
		}()
	}
	for i := 0; i < nblocks && ctx.Err() == nil; i++ {
		off := int64(i) * bs
		if d := known(i, off, min(bs, size-off)); d != nil {
			digests[i] = d
			continue
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return "", firstErr
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return Combine(digests), nil
}

// inHole reports whether [off, off+n) lies inside one hole (holes sorted).
func inHole(holes []Hole, off, n int64) bool {
	for _, h := range holes {
		if h.Off <= off && off+n <= h.Off+h.Len {
			return true
		}
		if h.Off > off {
			return false
		}
	}
	return false
}
