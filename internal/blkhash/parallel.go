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
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	bs := int64(blockSize)
	nblocks := int((size + bs - 1) / bs)
	digests := make([][]byte, nblocks)
	zero := digestOfZeros(blockSize)
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, blockSize)
			for i := range next {
				off := int64(i) * bs
				n := min(bs, size-off)
				if n == bs && inHole(holes, off, n) {
					digests[i] = zero
					continue
				}
				if _, err := r.ReadAt(buf[:n], off); err != nil && err != io.EOF {
					once.Do(func() { firstErr = err })
					continue
				}
				digests[i] = BlockDigest(buf[:n])
			}
		}()
	}
	for i := 0; i < nblocks && ctx.Err() == nil; i++ {
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
