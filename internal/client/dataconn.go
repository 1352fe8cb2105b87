package client

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// dataConn is one keep-alive HTTP/1.1 connection to a transfer URL. It is
// hand-written rather than net/http because the request body must reach
// the socket straight from the file: io.CopyN(conn, file) on a TCP
// connection is sendfile(2), which net/http's client never does.
type dataConn struct {
	url  *url.URL
	conn net.Conn
	br   *bufio.Reader
}

func dialData(u *url.URL) (*dataConn, error) {
	if u.Scheme != "http" {
		return nil, fmt.Errorf("transfer URL %s: only http is supported", u)
	}
	host := u.Host
	if u.Port() == "" {
		host += ":80"
	}
	c, err := net.DialTimeout("tcp", host, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (%v)", u.Host, ErrUnreachable, err)
	}
	return &dataConn{url: u, conn: c, br: bufio.NewReader(c)}, nil
}

func (d *dataConn) Close() error { return d.conn.Close() }

func (d *dataConn) header(method, query string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s%s HTTP/1.1\r\nHost: %s\r\n", method, d.url.EscapedPath(), query, d.url.Host)
	for _, h := range extra {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// response reads one answer; an error answer becomes *APIError.
func (d *dataConn) response(method string) error {
	res, err := http.ReadResponse(d.br, &http.Request{Method: method})
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode >= 400 {
		return readAPIError(res)
	}
	_, err = io.Copy(io.Discard, res.Body)
	return err
}

// put sends [off, off+n) of f. f is this connection's own descriptor, so
// seeking it races with no one.
func (d *dataConn) put(f *os.File, off, n int64) error {
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	hdr := d.header("PUT", "?flush=n", "Content-Type: application/octet-stream",
		fmt.Sprintf("Content-Range: bytes %d-%d/*", off, off+n-1), fmt.Sprintf("Content-Length: %d", n))
	if _, err := io.WriteString(d.conn, hdr); err != nil {
		return err
	}
	// *net.TCPConn.ReadFrom(*io.LimitedReader{*os.File}) is sendfile(2).
	if _, err := io.CopyN(d.conn, f, n); err != nil {
		return err
	}
	return d.response("PUT")
}

func (d *dataConn) patch(body string) error {
	hdr := d.header("PATCH", "", "Content-Type: application/json", fmt.Sprintf("Content-Length: %d", len(body)))
	if _, err := io.WriteString(d.conn, hdr+body); err != nil {
		return err
	}
	return d.response("PATCH")
}

func (d *dataConn) zero(off, n int64) error {
	return d.patch(fmt.Sprintf(`{"op": "zero", "offset": %d, "size": %d, "flush": false}`, off, n))
}

func (d *dataConn) flush() error { return d.patch(`{"op": "flush"}`) }

// options reads the server's limits.
func (d *dataConn) options() (maxWriters, maxReaders int, err error) {
	if _, err := io.WriteString(d.conn, d.header("OPTIONS", "")); err != nil {
		return 0, 0, err
	}
	res, err := http.ReadResponse(d.br, &http.Request{Method: "OPTIONS"})
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	if res.StatusCode >= 400 {
		return 0, 0, readAPIError(res)
	}
	var o struct {
		MaxWriters int `json:"max_writers"`
		MaxReaders int `json:"max_readers"`
	}
	if err := jsonDecode(res.Body, &o); err != nil {
		return 0, 0, err
	}
	return max(o.MaxWriters, 1), max(o.MaxReaders, 1), nil
}
