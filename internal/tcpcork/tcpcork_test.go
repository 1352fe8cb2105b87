package tcpcork

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func corked(t *testing.T, c *net.TCPConn) int {
	t.Helper()
	raw, _ := c.SyscallConn()
	var v int
	var err error
	raw.Control(func(fd uintptr) { v, err = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_CORK) })
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Cork sets TCP_CORK on the request's own connection and the returned
// function clears it; on a unix socket both do nothing.
func TestCorkAndUncork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			defer c.Close()
			c.Read(make([]byte, 1))
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := WithConn(context.Background(), c)
	uncork := Cork(ctx)
	if got := corked(t, c.(*net.TCPConn)); got != 1 {
		t.Fatalf("TCP_CORK %d after Cork, want 1", got)
	}
	uncork()
	if got := corked(t, c.(*net.TCPConn)); got != 0 {
		t.Fatalf("TCP_CORK %d after uncork, want 0", got)
	}

	sock := filepath.Join(t.TempDir(), "s")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	go func() {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
		}
	}()
	uc, err := ul.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	Cork(WithConn(context.Background(), uc))() // no panic, no error
	Cork(context.Background())()               // no connection recorded
}
