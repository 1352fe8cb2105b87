package e2e

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"hangar/internal/testenv"
)

// engines returns the PostgreSQL DSN and the GlusterFS mounts
// scripts/test.sh started.
func engines(t *testing.T) (string, []string) {
	t.Helper()
	dsn := testenv.Engine(t, "HANGAR_TEST_POSTGRES", "PostgreSQL")
	return dsn, strings.Split(testenv.Engine(t, "HANGAR_TEST_GLUSTER", "a GlusterFS volume"), ":")
}

func freeAddrOn(t *testing.T, ip string) string {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// cluster starts n servers on 127.0.0.11, .12, … sharing one catalog
// database and one store: the Gluster volume, each server through its own
// mount, or (s3) a bucket on Ceph RGW with transfers staged on the Gluster
// volume, so that any server can take any range.
func cluster(t *testing.T, n int, s3 bool) []*server {
	_, mounts := engines(t)
	if len(mounts) < n {
		t.Fatalf("need %d Gluster mounts, have %d", n, len(mounts))
	}
	db := testenv.PostgresDB(t)
	dir := "e2e-" + uuid.NewString()
	t.Cleanup(func() { os.RemoveAll(filepath.Join(mounts[0], dir)) })
	var bucket, endpoint string
	if s3 {
		e, b := testenv.S3Bucket(t)
		bucket, endpoint = b, e.Endpoint
		// The servers read their credentials from the environment, as an
		// operator's would.
		t.Setenv("AWS_ACCESS_KEY_ID", e.AccessKey)
		t.Setenv("AWS_SECRET_ACCESS_KEY", e.SecretKey)
	}
	var srvs []*server
	for i := 0; i < n; i++ {
		store := "file://" + filepath.Join(mounts[i], dir)
		if s3 {
			store = "s3://" + bucket + "/images?endpoint=" + endpoint + "&staging=" + filepath.Join(mounts[i], dir, "staging")
		}
		addr := freeAddrOn(t, fmt.Sprintf("127.0.0.%d", 11+i))
		srvs = append(srvs, startOn(t, t.TempDir(), addr, nil, "--catalog", db, "--store", store, "--log-level", "warn"))
	}
	return srvs
}

// on rewrites a transfer URL to the same path on another server, as a load
// balancer in front of them would route it.
func on(s *server, transferURL string) string {
	u, _ := url.Parse(transferURL)
	return s.url + u.Path
}

func putRange(t *testing.T, target string, data []byte, off int) error {
	req, _ := http.NewRequest("PUT", target+"?flush=n", bytes.NewReader(data))
	req.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/*", off, off+len(data)-1))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("PUT %s: %s", target, res.Status)
	}
	return nil
}

func downloadFrom(t *testing.T, s *server, id string) []byte {
	t.Helper()
	res, body := s.do("GET", "/v2/images/"+id+"/file", nil)
	if res.StatusCode != 200 {
		t.Fatalf("download from %s: %d", s.url, res.StatusCode)
	}
	return body
}

// Three servers: create on the first, one transfer whose ranges go to all
// three, flushed on each, finalized on the third; every server then
// serves the image byte for byte, with the same checksums.
func TestMultiServerTransfer(t *testing.T) {
	for _, s3 := range []bool{false, true} {
		t.Run(map[bool]string{false: "gluster", true: "s3"}[s3], func(t *testing.T) { multiServerTransfer(t, cluster(t, 3, s3)) })
	}
}

func multiServerTransfer(t *testing.T, srvs []*server) {
	data := make([]byte, 24<<20+4097)
	rand.Read(data)
	id := srvs[0].create("shared")
	tr := srvs[0].json("POST", "/v2/images/"+id+"/transfers", map[string]any{"ops": []string{"write"}, "size": len(data)})
	const chunk = 1 << 20
	for i, off := 0, 0; off < len(data); i, off = i+1, off+chunk {
		end := min(off+chunk, len(data))
		if err := putRange(t, on(srvs[i%3], tr["transfer_url"].(string)), data[off:end], off); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range srvs {
		s.json("PATCH", "/images/"+tr["id"].(string), map[string]any{"op": "flush"})
	}
	fin := srvs[2].json("POST", "/v2/images/"+id+"/transfers/"+tr["id"].(string)+"/finalize", nil)
	if fin["phase"] != "finished" {
		t.Fatalf("finalize on server 3: %v", fin)
	}
	md5, sha := sums(t, writeTemp(t, data))
	for i, s := range srvs {
		if got := downloadFrom(t, s, id); !bytes.Equal(got, data) {
			t.Fatalf("server %d serves %d bytes that differ", i+1, len(got))
		}
		if im := s.checksummed(id); im["checksum"] != md5 || im["os_hash_value"] != sha || im["status"] != "active" {
			t.Fatalf("server %d: %v", i+1, im)
		}
	}
	// The transfer ended everywhere: a late write through another server
	// is refused instead of changing the active image.
	if err := putRange(t, on(srvs[0], tr["transfer_url"].(string)), []byte("late"), 0); err == nil {
		t.Fatal("a write after finalize was accepted")
	}
	if got := downloadFrom(t, srvs[1], id); !bytes.Equal(got, data) {
		t.Fatal("the image changed after finalize")
	}
}

// A server dies (kill -9) in the middle of an upload; the client sends the
// ranges it could not deliver through the other two and finalizes there.
func TestMultiServerKillOne(t *testing.T) {
	for _, s3 := range []bool{false, true} {
		t.Run(map[bool]string{false: "gluster", true: "s3"}[s3], func(t *testing.T) { multiServerKillOne(t, cluster(t, 3, s3)) })
	}
}

func multiServerKillOne(t *testing.T, srvs []*server) {
	data := make([]byte, 16<<20)
	rand.Read(data)
	id := srvs[0].create("survivor")
	tr := srvs[0].json("POST", "/v2/images/"+id+"/transfers", map[string]any{"ops": []string{"write"}, "size": len(data)})
	turl := tr["transfer_url"].(string)
	const chunk = 1 << 20
	var failed []int
	for i, off := 0, 0; off < len(data); i, off = i+1, off+chunk {
		if i == 6 {
			srvs[1].kill9()
		}
		if err := putRange(t, on(srvs[i%3], turl), data[off:off+chunk], off); err != nil {
			failed = append(failed, off)
		}
	}
	if len(failed) == 0 {
		t.Fatal("no range failed on the killed server")
	}
	for k, off := range failed { // retried through the survivors
		if err := putRange(t, on(srvs[[]int{0, 2}[k%2]], turl), data[off:off+chunk], off); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*server{srvs[0], srvs[2]} {
		s.json("PATCH", "/images/"+tr["id"].(string), map[string]any{"op": "flush"})
	}
	srvs[0].json("POST", "/v2/images/"+id+"/transfers/"+tr["id"].(string)+"/finalize", nil)
	for _, s := range []*server{srvs[0], srvs[2]} {
		if got := downloadFrom(t, s, id); !bytes.Equal(got, data) {
			t.Fatalf("%s serves bytes that differ", s.url)
		}
	}
	t.Logf("%d ranges failed on the killed server and were resent", len(failed))
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
