package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// imageioClient runs testdata/imageio_client.py with the venv's python.
func imageioClient(t *testing.T, args ...string) map[string]any {
	t.Helper()
	py := venvTool(t, "python")
	need(t, "qemu-nbd", "Debian package qemu-utils, which the imageio client needs")
	script, _ := filepath.Abs("testdata/imageio_client.py")
	out, err := exec.Command(py, append([]string{script}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("imageio client %v: %v\n%s", args, err, out)
	}
	var m map[string]any
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("imageio client output: %s", out)
	}
	return m
}

func (s *server) json(method, path string, body any) map[string]any {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	res, b := s.do(method, path, rd, "Content-Type: application/json")
	if res.StatusCode >= 300 {
		s.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

func (s *server) transfer(imageID string, ops string, size int64) map[string]any {
	return s.json("POST", "/v2/images/"+imageID+"/transfers", map[string]any{"ops": []string{ops}, "size": size})
}

// sparseFile makes a file of size bytes with 16 MiB of random data at each
// of offsets (MiB), the rest holes.
func sparseFile(t *testing.T, path string, size int64, offsets ...int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Truncate(size)
	buf := make([]byte, 16<<20)
	for _, off := range offsets {
		rand.Read(buf)
		f.WriteAt(buf, off<<20)
	}
}

func allocated(t *testing.T, path string) int64 {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// The real ovirt-imageio client uploads (4 workers) into a Hangar write
// transfer and downloads from a read transfer, dense and sparse images.
func TestImageioClientRoundTrip(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "data"), nil)
	dense := randomFile(t, dir, "dense.raw", 96<<20)
	sparse := filepath.Join(dir, "sparse.raw")
	sparseFile(t, sparse, 1<<30, 0, 300, 700, 1000) // 1 GiB virtual, 64 MiB of data
	for _, c := range []struct {
		name, path string
		data       int64
	}{{"dense", dense, 96 << 20}, {"sparse", sparse, 64 << 20}} {
		t.Run(c.name, func(t *testing.T) {
			fi, _ := os.Stat(c.path)
			id := srv.create(c.name)
			tr := srv.transfer(id, "write", fi.Size())
			url := tr["transfer_url"].(string)
			up := imageioClient(t, "upload", c.path, url, "4")
			want := imageioClient(t, "checksum", c.path)["checksum"]
			if got := srv.json("GET", strings.TrimPrefix(url, srv.url)+"/checksum", nil)["checksum"]; got != want {
				t.Fatalf("server checksum %v, imageio client's %v", got, want)
			}
			progress := srv.json("GET", "/v2/images/"+id+"/transfers/"+tr["id"].(string), nil)
			wire := int64(progress["transferred"].(float64))
			if wire != c.data {
				t.Errorf("server received %d data bytes for %d bytes of data", wire, c.data)
			}
			fin := srv.json("POST", "/v2/images/"+id+"/transfers/"+tr["id"].(string)+"/finalize", nil)
			if block, _ := fin["block_checksum"].(map[string]any); block["checksum"] != want {
				t.Fatalf("finalize block checksum %v, imageio client's %v", fin["block_checksum"], want)
			}
			md5, sha := sums(t, c.path)
			im := srv.checksummed(id)
			if im["status"] != "active" || im["checksum"] != md5 || im["os_hash_value"] != sha || im["size"] != float64(fi.Size()) {
				t.Fatalf("after finalize: %v", im)
			}
			stored := filepath.Join(srv.data, "store", "objects", id)
			if used := allocated(t, stored); used > c.data+c.data/8+(1<<20) {
				t.Errorf("stored image uses %d bytes on disk for %d bytes of data", used, c.data)
			}

			rd := srv.transfer(id, "read", 0)
			out := filepath.Join(dir, c.name+".out")
			down := imageioClient(t, "download", rd["transfer_url"].(string), out, "4")
			sameFile(t, c.path, out)
			if used := allocated(t, out); used > c.data+c.data/8+(1<<20) {
				t.Errorf("downloaded file uses %d bytes on disk for %d bytes of data", used, c.data)
			}
			if c.name == "sparse" {
				var exts []map[string]any
				res, b := srv.do("GET", strings.TrimPrefix(rd["transfer_url"].(string), srv.url)+"/extents", nil)
				json.Unmarshal(b, &exts)
				holes := 0
				for _, e := range exts {
					if e["zero"] == true {
						holes++
					}
				}
				if res.StatusCode != 200 || holes < 4 {
					t.Errorf("extents of the sparse image show %d holes: %s", holes, b)
				}
			}
			t.Logf("%s: %d bytes, %d on the wire; upload %.2f s (%.2f GB/s), download %.2f s (%.2f GB/s)", c.name, fi.Size(), wire,
				up["seconds"], float64(fi.Size())/up["seconds"].(float64)/1e9, down["seconds"], float64(fi.Size())/down["seconds"].(float64)/1e9)
		})
	}
}

// kill -9 in the middle of an 8-connection upload: flushed data survives,
// the transfer survives, the client re-sends what it had not flushed and
// finalizes a correct image.
func TestKill9DuringTransfer(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	srv := startServer(t, data, nil)
	const size, chunk = 64 << 20, 1 << 20
	img := randomFile(t, dir, "disk.raw", size)
	src, _ := os.ReadFile(img)
	id := srv.create("crash")
	tr := srv.transfer(id, "write", size)
	url, tid := tr["transfer_url"].(string), tr["id"].(string)

	send := func(url string, offs []int, flush string) (done []int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < len(offs); i += 8 {
					off := offs[i] * chunk
					req, _ := http.NewRequest("PUT", url+"?flush="+flush, bytes.NewReader(src[off:off+chunk]))
					req.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/*", off, off+chunk-1))
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						return // the server died
					}
					res.Body.Close()
					if res.StatusCode == 200 {
						mu.Lock()
						done = append(done, offs[i])
						mu.Unlock()
					}
				}
			}(w)
		}
		wg.Wait()
		return done
	}
	first := make([]int, 32)
	for i := range first {
		first[i] = i
	}
	if got := send(url, first, "y"); len(got) != 32 { // flushed before the kill
		t.Fatalf("first half: %d of 32 ranges written", len(got))
	}
	rest := make([]int, 32)
	for i := range rest {
		rest[i] = 32 + i
	}
	killed := make(chan struct{})
	go func() {
		waitFor(t, func() bool {
			p := srv.json("GET", "/v2/images/"+id+"/transfers/"+tid, nil)
			return p["transferred"].(float64) >= 40<<20
		})
		srv.kill9()
		close(killed)
	}()
	send(url, rest, "n")
	<-killed

	srv = startServer(t, data, nil)
	url = srv.url + "/images/" + tid
	if p := srv.json("GET", "/v2/images/"+id+"/transfers/"+tid, nil); p["phase"] != "transferring" {
		t.Fatalf("transfer after restart: %v", p)
	}
	if im := srv.image(id); im["status"] != "saving" {
		t.Fatalf("image after restart: %v", im["status"])
	}
	res, b := srv.do("GET", "/images/"+tid, nil, "Range: bytes=0-33554431")
	if res.StatusCode != 206 || !bytes.Equal(b, src[:32<<20]) {
		t.Fatalf("flushed half after kill -9: %d, equal=%v", res.StatusCode, bytes.Equal(b, src[:32<<20]))
	}
	if got := send(url, rest, "n"); len(got) != 32 {
		t.Fatalf("re-sent %d of 32 ranges", len(got))
	}
	srv.json("PATCH", "/images/"+tid, map[string]any{"op": "flush"})
	srv.json("POST", "/v2/images/"+id+"/transfers/"+tid+"/finalize", nil)
	md5, _ := sums(t, img)
	if im := srv.checksummed(id); im["status"] != "active" || im["checksum"] != md5 {
		t.Fatalf("after finalize: %v", im)
	}
}
