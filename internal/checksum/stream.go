package checksum

import (
	"crypto/md5"
	"crypto/sha512"
	"encoding/hex"
	"hash"
)

// Stream computes the same digests as Copy for bytes pushed to it with
// Write, each digest on its own goroutine. Write copies p into pooled
// chunks, so the caller may reuse p at once. Not safe for concurrent use.
type Stream struct {
	free      chan *chunk
	consumers []*consumer
	md, sh    hash.Hash
	cur       *chunk
	size      int64
	closed    bool
}

// NewStream starts the digest goroutines; extra hashes get one each too.
// Call Sums (or Close) to stop them.
func NewStream(extra ...hash.Hash) *Stream {
	s := &Stream{free: make(chan *chunk, inFlight), md: md5.New(), sh: sha512.New()}
	for i := 0; i < inFlight; i++ {
		s.free <- pool.Get().(*chunk)
	}
	for _, h := range append([]hash.Hash{s.md, s.sh}, extra...) {
		s.consumers = append(s.consumers, start(s.free, hashFn(h)))
	}
	return s
}

// Write feeds p to every digest.
func (s *Stream) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if s.cur == nil {
			s.cur = <-s.free
			s.cur.n = 0
		}
		m := copy(s.cur.buf[s.cur.n:], p)
		s.cur.n += m
		p = p[m:]
		if s.cur.n == len(s.cur.buf) {
			s.send()
		}
	}
	s.size += int64(n)
	return n, nil
}

func (s *Stream) send() {
	s.cur.refs.Store(int32(len(s.consumers)))
	for _, c := range s.consumers {
		c.in <- s.cur
	}
	s.cur = nil
}

// Size is the number of bytes written so far.
func (s *Stream) Size() int64 { return s.size }

// Close stops the goroutines; it is safe to call more than once.
func (s *Stream) Close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.cur != nil && s.cur.n > 0 {
		s.send()
	} else if s.cur != nil {
		s.free <- s.cur
	}
	for _, c := range s.consumers {
		close(c.in)
	}
	for _, c := range s.consumers {
		<-c.done
	}
	for i := 0; i < inFlight; i++ {
		pool.Put(<-s.free)
	}
}

// Sums finishes the stream and returns the digests of everything written;
// the extra hashes are complete too.
func (s *Stream) Sums() Sums {
	s.Close()
	return Sums{Size: s.size, MD5: hex.EncodeToString(s.md.Sum(nil)), SHA512: hex.EncodeToString(s.sh.Sum(nil))}
}
