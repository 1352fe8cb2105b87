package checksum

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"golang.org/x/sys/unix"
)

func TestCopyMatchesSerialDigests(t *testing.T) {
	for _, size := range []int{0, 1, chunkSize - 1, chunkSize, chunkSize + 1, 5*chunkSize + 12345} {
		data := make([]byte, size)
		rand.Read(data)
		var dst bytes.Buffer
		// OneByteReader-style short reads exercise ReadFull's refilling.
		sums, err := Copy(&dst, iotest.HalfReader(bytes.NewReader(data)))
		if err != nil {
			t.Fatal(err)
		}
		m, s := md5.Sum(data), sha512.Sum512(data)
		if sums.Size != int64(size) || sums.MD5 != hex.EncodeToString(m[:]) || sums.SHA512 != hex.EncodeToString(s[:]) {
			t.Fatalf("size %d: sums %+v wrong", size, sums)
		}
		if !bytes.Equal(dst.Bytes(), data) {
			t.Fatalf("size %d: copied bytes differ", size)
		}
	}
}

func TestCopyReadError(t *testing.T) {
	boom := errors.New("connection reset")
	src := io.MultiReader(bytes.NewReader(make([]byte, 3*chunkSize)), iotest.ErrReader(boom))
	if _, err := Copy(io.Discard, src); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
}

// A source that ends early (a body shorter than its Content-Length) must
// fail the copy: ending cleanly would store a truncated image.
func TestCopyTruncatedSourceFails(t *testing.T) {
	src := io.MultiReader(bytes.NewReader(make([]byte, chunkSize+10)), iotest.ErrReader(io.ErrUnexpectedEOF))
	if _, err := Copy(io.Discard, src); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want io.ErrUnexpectedEOF", err)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n++; w.n > 2 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestCopyWriteErrorStopsReading(t *testing.T) {
	// An endless source: Copy must stop once the writer fails.
	_, err := Copy(&failWriter{}, rand.Reader)
	if err == nil || err.Error() != "disk full" {
		t.Fatalf("err = %v, want disk full", err)
	}
}

func BenchmarkCopy(b *testing.B) {
	data := make([]byte, 64<<20)
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		Copy(io.Discard, bytes.NewReader(data))
	}
}

func TestBackgroundMatchesCopyAtNice19(t *testing.T) {
	data := make([]byte, 3*chunkSize+777)
	rand.Read(data)
	want, _ := Copy(io.Discard, bytes.NewReader(data))
	type result struct {
		sums Sums
		nice int
		err  error
	}
	res := make(chan result)
	go func() { // Background nices the thread of the goroutine calling it
		sums, err := Background(io.Discard, bytes.NewReader(data))
		// Getpriority returns 20-nice for a thread (the raw syscall).
		prio, perr := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
		res <- result{sums, 20 - prio, errors.Join(err, perr)}
	}()
	r := <-res
	if r.err != nil || r.sums != want {
		t.Fatalf("background %+v, %v; copy %+v", r.sums, r.err, want)
	}
	if r.nice != 19 {
		t.Fatalf("nice %d, want 19", r.nice)
	}
}
