package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// summary reads the JSON summary line `hangar upload -o json` prints last
// on stderr.
func summary(t *testing.T, stderr string) map[string]any {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["summary"] == true {
			return m
		}
	}
	t.Fatalf("no summary in:\n%s", stderr)
	return nil
}

// The server is killed halfway through a large upload; after a restart,
// running the same command again continues it, and the bytes sent in total
// stay close to the file's size.
func TestCLIResumeAfterServerKill(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addr := freeAddr(t)
	srv := startServerAt(t, data, addr)
	const size = 256 << 20
	img := randomFile(t, dir, "big.raw", size)
	args := []string{"upload", img, "--name", "big", "--flush-every", "8388608", "-o", "json", "--url", srv.url}

	first := exec.Command(hangarBin, args...)
	var errs1 bytes.Buffer
	first.Stderr = &errs1
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return doneBytes(t, srv, "big") >= 64<<20 })
	srv.kill9()
	if err := first.Wait(); err == nil {
		t.Fatal("the upload survived the server's death")
	}
	if !strings.Contains(errs1.String(), "run the same command again to resume") {
		t.Fatalf("first run said:\n%s", errs1.String())
	}

	srv = startServerAt(t, data, addr)
	out, errs2, code := hangarCLI(t, srv.url, nil, args[:len(args)-2]...)
	if code != 0 || !strings.Contains(errs2, "resuming the upload of big") {
		t.Fatalf("second run: exit %d\n%s", code, errs2)
	}
	sent := summary(t, errs1.String())["data_bytes"].(float64) + summary(t, errs2)["data_bytes"].(float64)
	if sent < size || sent > size+48<<20 {
		t.Fatalf("sent %.0f bytes in total for a %d-byte file", sent, size)
	}
	var im map[string]any
	json.Unmarshal([]byte(out), &im)
	if id, ok := im["id"].(string); ok {
		im = srv.checksummed(id)
	}
	md5, _ := sums(t, img)
	if im["status"] != "active" || im["checksum"] != md5 {
		t.Fatalf("after resume: %v", im)
	}
	t.Logf("sent %.1f MiB in total for a %d MiB file", sent/(1<<20), size>>20)
}

func doneBytes(t *testing.T, srv *server, name string) int64 {
	res, b := srv.do("GET", "/v2/images?name="+name, nil)
	var list struct{ Images []map[string]any }
	if res.StatusCode != 200 || json.Unmarshal(b, &list) != nil || len(list.Images) == 0 {
		return 0
	}
	res, b = srv.do("GET", "/v2/images/"+list.Images[0]["id"].(string)+"/transfers", nil)
	var ts struct {
		Transfers []struct {
			Done []struct{ Length int64 } `json:"done_ranges"`
		}
	}
	if res.StatusCode != 200 || json.Unmarshal(b, &ts) != nil || len(ts.Transfers) == 0 {
		return 0
	}
	var n int64
	for _, d := range ts.Transfers[0].Done {
		n += d.Length
	}
	return n
}
