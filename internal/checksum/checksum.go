// Package checksum computes the digests Glance records for an image (MD5 as
// `checksum`, SHA-512 as `os_hash_value`) while the bytes stream to storage.
// Each digest runs on its own goroutine, and the write to storage on a third,
// so one upload is bound by the slowest of them rather than their sum:
// Glance hashes both back to back on one core (≈1.35 s/GiB each).
package checksum

import (
	"crypto/md5"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"hangar/internal/storage"
)

// Algo is the os_hash_algo Hangar records.
const Algo = "sha512"

// Sums are the results of one Copy.
type Sums struct {
	Size   int64
	MD5    string // Glance's `checksum`
	SHA512 string // Glance's `os_hash_value`
}

const (
	chunkSize = 1 << 20
	inFlight  = 4
)

type chunk struct {
	buf  []byte
	n    int
	refs atomic.Int32
}

// Chunks are aligned so a store writing with O_DIRECT takes them as they are.
var pool = sync.Pool{New: func() any { return &chunk{buf: storage.AlignedBuffer(chunkSize)} }}

// consumer handles chunks in order on its own goroutine.
type consumer struct {
	in   chan *chunk
	err  error
	done chan struct{}
}

func start(free chan<- *chunk, setup func(), fn func([]byte) error) *consumer {
	c := &consumer{in: make(chan *chunk, inFlight), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		setup()
		for ch := range c.in {
			if c.err == nil {
				c.err = fn(ch.buf[:ch.n])
			}
			if ch.refs.Add(-1) == 0 {
				free <- ch
			}
		}
	}()
	return c
}

// Copy copies src to dst until EOF, computing both digests in parallel with
// the write, and feeding each extra hash on a goroutine of its own too. It
// returns the sums of the bytes written; on error dst may hold a prefix of
// src.
func Copy(dst io.Writer, src io.Reader, extra ...hash.Hash) (Sums, error) {
	return copyWith(func() {}, dst, src, extra...)
}

// Background is Copy with every goroutine of it, the caller's included,
// on an OS thread of its own at the lowest CPU priority (nice 19), so the
// hashing takes only CPU time that requests leave idle. Call it from a
// goroutine that has no other work: its thread stays niced and ends with
// the goroutine.
func Background(dst io.Writer, src io.Reader) (Sums, error) {
	LowPriority()
	return copyWith(LowPriority, dst, src)
}

// LowPriority locks the calling goroutine to its thread and gives the
// thread nice 19. It never unlocks, so the Go runtime ends the thread with
// the goroutine instead of reusing it for other work at that priority.
func LowPriority() {
	runtime.LockOSThread()
	// Best effort: on failure the work just runs at normal priority.
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19)
}

func copyWith(setup func(), dst io.Writer, src io.Reader, extra ...hash.Hash) (Sums, error) {
	free := make(chan *chunk, inFlight)
	for i := 0; i < inFlight; i++ {
		free <- pool.Get().(*chunk)
	}
	var failed atomic.Bool
	md, sh := md5.New(), sha512.New()
	writer := start(free, setup, func(p []byte) error {
		_, err := dst.Write(p)
		if err != nil {
			failed.Store(true)
		}
		return err
	})
	consumers := []*consumer{writer, start(free, setup, hashFn(md)), start(free, setup, hashFn(sh))}
	for _, h := range extra {
		consumers = append(consumers, start(free, setup, hashFn(h)))
	}
	size, rerr := feed(src, free, consumers, &failed)
	for _, c := range consumers {
		close(c.in)
	}
	for _, c := range consumers {
		<-c.done
	}
	for i := 0; i < inFlight; i++ {
		pool.Put(<-free)
	}
	if werr := writer.err; werr != nil {
		return Sums{}, werr
	}
	if rerr != nil {
		return Sums{}, rerr
	}
	return Sums{Size: size, MD5: hex.EncodeToString(md.Sum(nil)), SHA512: hex.EncodeToString(sh.Sum(nil))}, nil
}

func hashFn(h hash.Hash) func([]byte) error {
	return func(p []byte) error { h.Write(p); return nil }
}

// feed reads src in chunks and hands each to every consumer.
func feed(src io.Reader, free chan *chunk, consumers []*consumer, failed *atomic.Bool) (int64, error) {
	var size int64
	for !failed.Load() {
		ch := <-free
		n, err := fill(src, ch.buf)
		if n > 0 {
			ch.n = n
			size += int64(n)
			ch.refs.Store(int32(len(consumers)))
			for _, c := range consumers {
				c.in <- ch
			}
		} else {
			free <- ch
		}
		if err == io.EOF {
			return size, nil
		}
		if err != nil {
			return size, err
		}
	}
	return size, nil
}

// fill reads until buf is full or src ends. Unlike io.ReadFull it keeps
// src's own errors apart from its end: a body cut short reports
// io.ErrUnexpectedEOF, which must fail the copy, not end it cleanly.
func fill(src io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := src.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
