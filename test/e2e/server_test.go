package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// server is one running `hangar serve` process.
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	data string
	log  *bytes.Buffer
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServer runs hangar serve on data; wrap, if given, is a command
// prefix (strace …) to run it under.
func startServer(t *testing.T, data string, wrap []string, extra ...string) *server {
	t.Helper()
	return startOn(t, data, freeAddr(t), wrap, extra...)
}

// startServerAt restarts a server on the address a client already uses.
func startServerAt(t *testing.T, data, addr string) *server {
	t.Helper()
	return startOn(t, data, addr, nil)
}

func startOn(t *testing.T, data, addr string, wrap []string, extra ...string) *server {
	t.Helper()
	args := append([]string{hangarBin, "serve", "--data", data, "--listen", addr}, extra...)
	args = append(append([]string{}, wrap...), args...)
	s := &server{t: t, url: "http://" + addr, data: data, log: &bytes.Buffer{}}
	s.cmd = exec.Command(args[0], args[1:]...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	// Its own process group, so stopping a wrapped server (strace …) stops
	// the server too, not only the wrapper.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("server log:\n%s", s.log)
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, err := http.Get(s.url + "/healthz")
		if err == nil && res.StatusCode == 200 {
			res.Body.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not become healthy: %v\n%s", err, s.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the server gracefully (SIGTERM), as an operator would.
func (s *server) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// kill9 ends the server the way a crash does.
func (s *server) kill9() {
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.cmd.Wait()
}

func (s *server) do(method, path string, body io.Reader, headers ...string) (*http.Response, []byte) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

func (s *server) image(id string) map[string]any {
	s.t.Helper()
	res, b := s.do("GET", "/v2/images/"+id, nil)
	if res.StatusCode != 200 {
		s.t.Fatalf("show %s: %d %s", id, res.StatusCode, b)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// checksummed waits for the image's Glance checksums, which the server
// computes in the background after a transfer, and returns the image.
func (s *server) checksummed(id string) map[string]any {
	s.t.Helper()
	var im map[string]any
	waitFor(s.t, func() bool { im = s.image(id); return im["checksum"] != nil })
	return im
}

func (s *server) create(name string) string {
	s.t.Helper()
	body := fmt.Sprintf(`{"name": %q, "disk_format": "raw", "container_format": "bare"}`, name)
	res, b := s.do("POST", "/v2/images", strings.NewReader(body), "Content-Type: application/json")
	if res.StatusCode != 201 {
		s.t.Fatalf("create: %d %s", res.StatusCode, b)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m["id"].(string)
}

// randomFile writes n random bytes to a new file in dir.
func randomFile(t *testing.T, dir, name string, n int) string {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sums computes md5 and sha512 with coreutils, independently of Hangar.
func sums(t *testing.T, path string) (md5, sha512 string) {
	t.Helper()
	run := func(tool string) string {
		out, err := exec.Command(need(t, tool, "coreutils"), path).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(out))[0]
	}
	return run("md5sum"), run("sha512sum")
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	if out, err := exec.Command("cmp", a, b).CombinedOutput(); err != nil {
		t.Fatalf("%s and %s differ: %s", a, b, out)
	}
}
