package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hangarCLI runs the hangar client against srv; it returns stdout, stderr
// and the exit code.
func hangarCLI(t *testing.T, srvURL string, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(hangarBin, append(args, "--url", srvURL)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func cliJSON(t *testing.T, srvURL string, args ...string) map[string]any {
	t.Helper()
	out, errs, code := hangarCLI(t, srvURL, nil, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("hangar %v: exit %d: %s", args, code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("hangar %v: not JSON: %s", args, out)
	}
	return m
}

func TestCLIRoundTrips(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "data"), nil)
	empty := filepath.Join(dir, "empty.raw")
	os.WriteFile(empty, nil, 0o644)
	sparse := filepath.Join(dir, "sparse.raw")
	sparseFile(t, sparse, 1<<30, 10, 500, 900) // 48 MiB of data
	cases := []struct {
		name, path, format string
		data               int64
	}{
		{"dense", randomFile(t, dir, "dense.raw", 24<<20), "raw", 24 << 20},
		{"unaligned", randomFile(t, dir, "odd.raw", 3<<20+4097), "raw", 3<<20 + 4097},
		{"empty", empty, "raw", 0},
		{"sparse", sparse, "raw", 48 << 20},
		{"qcow2", qcow2File(t, dir), "qcow2", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			im := cliJSON(t, srv.url, "upload", c.path, "--name", c.name, "--connections", "4")
			if im["status"] != "active" {
				t.Fatalf("uploaded: %v", im)
			}
			im = srv.checksummed(im["id"].(string))
			md5, sha := sums(t, c.path)
			if im["status"] != "active" || im["checksum"] != md5 || im["os_hash_value"] != sha || im["disk_format"] != c.format {
				t.Fatalf("uploaded: %v", im)
			}
			if c.data > 0 {
				// The transfer record counts the bytes the server received.
				wire := transferred(t, srv, im["id"].(string))
				if int64(wire) != c.data {
					t.Errorf("server received %v bytes for %d bytes of data", wire, c.data)
				}
			}
			out := filepath.Join(dir, c.name+".out")
			if _, errs, code := hangarCLI(t, srv.url, nil, "download", c.name, out); code != 0 {
				t.Fatalf("download: %d %s", code, errs)
			}
			sameFile(t, c.path, out)
			if c.name == "sparse" {
				if used := allocated(t, out); used > 64<<20 {
					t.Errorf("downloaded sparse image uses %d bytes on disk", used)
				}
			}
			stdout, _, code := hangarCLI(t, srv.url, nil, "download", im["id"].(string), "-")
			want, _ := os.ReadFile(c.path)
			if code != 0 || stdout != string(want) {
				t.Fatalf("download to stdout: exit %d, %d bytes", code, len(stdout))
			}
		})
	}
	// Standard input, as one stream.
	data := bytes.Repeat([]byte("stdin "), 100000)
	out, errs, code := hangarCLI(t, srv.url, data, "upload", "-", "--name", "from-stdin", "-o", "json")
	if code != 0 || !strings.Contains(out, `"status":"active"`) {
		t.Fatalf("stdin upload: %d %s %s", code, out, errs)
	}
}

// transferred is the byte count of the image's (only) transfer.
func transferred(t *testing.T, srv *server, imageID string) float64 {
	t.Helper()
	py := `import json, sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(json.dumps(c.execute("select transferred from transfers where image_id = ?", (sys.argv[2],)).fetchall()))`
	out, err := exec.Command("python3", "-c", py, filepath.Join(srv.data, "catalog.db"), imageID).Output()
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]float64
	json.Unmarshal(out, &rows)
	if len(rows) != 1 {
		t.Fatalf("transfers of %s: %s", imageID, out)
	}
	return rows[0][0]
}

func qcow2File(t *testing.T, dir string) string {
	t.Helper()
	qemuImg := need(t, "qemu-img", "Debian package qemu-utils")
	p := filepath.Join(dir, "disk.qcow2")
	if out, err := exec.Command(qemuImg, "create", "-q", "-f", "qcow2", p, "1G").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v %s", err, out)
	}
	return p
}

// The upload body leaves the client by sendfile(2).
func TestCLIUploadUsesSendfile(t *testing.T) {
	strace := need(t, "strace", "Debian package strace")
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "data"), nil)
	img := randomFile(t, dir, "disk.raw", 32<<20)
	trace := filepath.Join(dir, "client.strace")
	cmd := exec.Command(strace, "-f", "-qq", "-e", "trace=sendfile", "-o", trace, hangarBin, "upload", img, "--url", srv.url)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("upload under strace: %v %s", err, out)
	}
	if sent := sendfileBytes(t, trace); sent < 32<<20 {
		t.Fatalf("sendfile carried %d of %d bytes", sent, 32<<20)
	}
}

// Bad input: one line on stderr, a non-zero exit, nothing left on the server.
func TestCLIBadInput(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "data"), nil)
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, []byte("good p1 admin\n"), 0o600)
	authed := startServer(t, filepath.Join(dir, "data2"), nil, "--auth", "tokens", "--tokens", tokens)
	img := randomFile(t, dir, "x.raw", 4096)
	cases := []struct {
		name string
		url  string
		args []string
		code int
	}{
		{"missing file", srv.url, []string{"upload", filepath.Join(dir, "nope.raw")}, 2},
		{"directory", srv.url, []string{"upload", dir}, 2},
		{"unknown image", srv.url, []string{"download", "no-such-image", filepath.Join(dir, "o")}, 3},
		{"unknown image id", srv.url, []string{"image", "show", "00000000-0000-0000-0000-000000000000"}, 3},
		{"wrong token", authed.url, []string{"upload", img, "--token", "bad"}, 4},
		{"server down", "http://127.0.0.1:1", []string{"upload", img}, 5},
		{"bad output", srv.url, []string{"image", "list", "-o", "yaml"}, 2},
		{"bad flag", srv.url, []string{"upload", img, "--connections", "many"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := hangarCLI(t, c.url, nil, c.args...)
			if code != c.code || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.HasPrefix(errs, "hangar: ") {
				t.Fatalf("exit %d (want %d), stderr %q", code, c.code, errs)
			}
		})
	}
	for _, s := range []*server{srv, authed} {
		res, b := s.do("GET", "/v2/images", nil, "X-Auth-Token: good")
		if res.StatusCode != 200 || strings.Contains(string(b), `"id"`) {
			t.Fatalf("images left behind: %s", b)
		}
	}
}
