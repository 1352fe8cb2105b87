package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// curl, as operators use it: sized upload with Expect: 100-continue, a
// chunked upload, range downloads.
func TestCurl(t *testing.T) {
	curl := need(t, "curl", "Debian package curl")
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "data"), nil)
	img := randomFile(t, dir, "disk.img", 4<<20+7)
	md5, sha := sums(t, img)
	for _, mode := range []string{"sized", "chunked"} {
		id := srv.create(mode)
		args := []string{"-sS", "-f", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT",
			"-H", "Content-Type: application/octet-stream", "-H", "Expect: 100-continue", "-T", img}
		if mode == "chunked" {
			args = append(args, "-H", "Transfer-Encoding: chunked")
		}
		out, err := exec.Command(curl, append(args, srv.url+"/v2/images/"+id+"/file")...).CombinedOutput()
		if err != nil || string(out) != "204" {
			t.Fatalf("%s curl upload: %v %s", mode, err, out)
		}
		im := srv.image(id)
		if im["checksum"] != md5 || im["os_hash_value"] != sha {
			t.Fatalf("%s: checksums %v/%v differ from md5sum/sha512sum", mode, im["checksum"], im["os_hash_value"])
		}
		dl := filepath.Join(dir, mode+".out")
		if out, err := exec.Command(curl, "-sS", "-f", "-o", dl, srv.url+"/v2/images/"+id+"/file").CombinedOutput(); err != nil {
			t.Fatalf("download: %v %s", err, out)
		}
		sameFile(t, img, dl)
		out, _ = exec.Command(curl, "-sS", "-r", "100-199", "-D", "-", "-o", dl, srv.url+"/v2/images/"+id+"/file").Output()
		if !strings.Contains(string(out), "206") || !strings.Contains(string(out), fmt.Sprintf("Content-Range: bytes 100-199/%d", 4<<20+7)) {
			t.Fatalf("range download headers:\n%s", out)
		}
	}
}

// The download body leaves by sendfile(2): count the syscalls and bytes of
// a real server under strace while curl downloads.
func TestDownloadUsesSendfile(t *testing.T) {
	strace := need(t, "strace", "Debian package strace")
	dir := t.TempDir()
	trace := filepath.Join(dir, "strace.out")
	srv := startServer(t, filepath.Join(dir, "data"), []string{strace, "-f", "-qq", "-e", "trace=sendfile", "-o", trace})
	const size = 32 << 20
	img := randomFile(t, dir, "disk.img", size)
	id := srv.create("sendfile")
	f, _ := os.Open(img)
	res, b := srv.do("PUT", "/v2/images/"+id+"/file", f, "Content-Type: application/octet-stream")
	f.Close()
	if res.StatusCode != 204 {
		t.Fatalf("upload: %d %s", res.StatusCode, b)
	}
	before := sendfileBytes(t, trace)
	res2, err := http.Get(srv.url + "/v2/images/" + id + "/file")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, res2.Body)
	res2.Body.Close()
	if n != size {
		t.Fatalf("downloaded %d bytes", n)
	}
	time.Sleep(200 * time.Millisecond) // let strace flush
	sent := sendfileBytes(t, trace) - before
	// net/http copies the first 512 bytes itself before it hands the rest
	// to sendfile (it holds them back for Content-Type sniffing).
	if sent < size-512 {
		t.Fatalf("sendfile moved %d of %d bytes: the download was copied in user space", sent, size)
	}
	t.Logf("sendfile carried %d bytes of a %d-byte download", sent, size)
}

// sendfileRet matches a finished sendfile call, also when strace split it
// into "sendfile(… <unfinished …>" and "<… sendfile resumed>…) = N".
var sendfileRet = regexp.MustCompile(`(?m)^.*(?:sendfile\(|sendfile resumed>).*\)\s+=\s+(\d+)\s*$`)

func sendfileBytes(t *testing.T, trace string) int64 {
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, m := range sendfileRet.FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		total += n
	}
	return total
}

// kill -9 in the middle of an upload: after restart the image is queued,
// no partial bytes remain, and a full upload gives the right checksums.
func TestKill9DuringUpload(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	srv := startServer(t, data, nil)
	img := randomFile(t, dir, "disk.img", 16<<20)
	md5, sha := sums(t, img)
	id := srv.create("crash")

	pr, pw := io.Pipe()
	req, _ := http.NewRequest("PUT", srv.url+"/v2/images/"+id+"/file", pr)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.ContentLength = 16 << 20
	go func() {
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	f, _ := os.Open(img)
	defer f.Close()
	io.CopyN(pw, f, 8<<20) // half the image, then the server dies
	waitFor(t, func() bool { return srv.image(id)["status"] == "saving" })
	srv.kill9()
	pw.CloseWithError(io.ErrClosedPipe)

	srv = startServer(t, data, nil)
	im := srv.image(id)
	if im["status"] != "queued" || im["size"] != nil || im["checksum"] != nil {
		t.Fatalf("after kill -9 and restart: %v", im)
	}
	if res, _ := srv.do("GET", "/v2/images/"+id+"/file", nil); res.StatusCode != 204 {
		t.Fatalf("half-uploaded image serves data: %d", res.StatusCode)
	}
	for _, sub := range []string{"tmp", "objects"} {
		if entries, _ := os.ReadDir(filepath.Join(data, "store", sub)); len(entries) != 0 {
			t.Fatalf("store/%s holds %d leftovers after recovery", sub, len(entries))
		}
	}
	f.Seek(0, io.SeekStart)
	if res, b := srv.do("PUT", "/v2/images/"+id+"/file", f, "Content-Type: application/octet-stream"); res.StatusCode != 204 {
		t.Fatalf("upload after restart: %d %s", res.StatusCode, b)
	}
	im = srv.image(id)
	if im["status"] != "active" || im["checksum"] != md5 || im["os_hash_value"] != sha {
		t.Fatalf("after re-upload: %v", im)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 15 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
