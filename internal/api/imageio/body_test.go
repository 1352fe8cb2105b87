package imageio

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"hangar/internal/transfer"
)

// raw sends a hand-made request and returns the first response status.
func raw(t *testing.T, addr, req string, closeWrite bool) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(req))
	if closeWrite {
		c.(*net.TCPConn).CloseWrite()
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Bodies shorter or longer than their Content-Length: the short one fails
// with 400 and writes only inside its range; the long one writes exactly
// Content-Length bytes, and the rest is not taken as data.
func TestBodyLengthMismatch(t *testing.T) {
	e := newEnv(t, transfer.Config{})
	url, _ := e.ticket(e.image(), 64, "write")
	base := bytes.Repeat([]byte{'.'}, 64)
	put(t, url, 0, base, "y")
	addr := strings.TrimPrefix(e.data, "http://")
	path := strings.TrimPrefix(url, e.data)

	short := fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: x\r\nContent-Range: bytes 8-23/*\r\nContent-Length: 16\r\n\r\n%s", path, "SSSSSSSS")
	if st := raw(t, addr, short, true); st != http.StatusBadRequest {
		t.Fatalf("short body: %d", st)
	}
	long := fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: x\r\nContent-Range: bytes 32-35/*\r\nContent-Length: 4\r\n\r\n%s", path, "LLLLLLLLLLLL")
	if st := raw(t, addr, long, false); st != http.StatusOK {
		t.Fatalf("long body: %d", st)
	}
	got := do(t, "GET", url, nil).body
	want := append([]byte{}, base...)
	copy(want[8:], "SSSSSSSS")
	copy(want[32:], "LLLL")
	if !bytes.Equal(got, want) {
		t.Fatalf("image is %q, want %q", got, want)
	}
}
