package e2e

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hangar/internal/testenv"
)

// cephCtl runs scripts/ceph.sh on the cluster scripts/test.sh started
// (HANGAR_TEST_CEPH_DIR); its second gateway serves only this test, so
// stopping it disturbs no other test.
func cephCtl(t *testing.T, cmd string) {
	t.Helper()
	dir := os.Getenv("HANGAR_TEST_CEPH_DIR")
	out, err := exec.Command(filepath.Join(repoRoot(t), "scripts", "ceph.sh"), cmd, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("ceph.sh %s: %v\n%s", cmd, err, out)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd() // test/e2e
	return filepath.Join(wd, "..", "..")
}

// The S3 gateway stops while a transfer is finalized: finalize fails with a
// clear error after its retries, the image is not active and keeps no
// half-sent object, the transfer stays open with its staged bytes; once
// the gateway is back, finalize succeeds and the image is whole.
func TestS3DownDuringFinalize(t *testing.T) {
	dir := testenv.Engine(t, "HANGAR_TEST_CEPH_DIR", "Ceph")
	e, bucket := testenv.S3Bucket(t)
	t.Setenv("AWS_ACCESS_KEY_ID", e.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", e.SecretKey)
	ep, err := os.ReadFile(filepath.Join(dir, "fault.endpoint"))
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, t.TempDir(), nil, "--store", "s3://"+bucket+"/img?endpoint="+string(bytes.TrimSpace(ep)))
	data := make([]byte, 12<<20+3)
	rand.Read(data)
	id := srv.create("fault")
	tr := srv.json("POST", "/v2/images/"+id+"/transfers", map[string]any{"ops": []string{"write"}, "size": len(data)})
	if err := putRange(t, on(srv, tr["transfer_url"].(string)), data, 0); err != nil {
		t.Fatal(err)
	}
	tid := tr["id"].(string)

	cephCtl(t, "rgw-down")
	t.Cleanup(func() { cephCtl(t, "rgw-up") }) // a no-op when it is up
	start := time.Now()
	res, body := srv.do("POST", "/v2/images/"+id+"/transfers/"+tid+"/finalize", nil)
	if res.StatusCode != 503 {
		t.Fatalf("finalize with the gateway down: %d %s", res.StatusCode, body)
	}
	t.Logf("finalize failed after %v: %d %s", time.Since(start).Round(time.Millisecond), res.StatusCode, bytes.TrimSpace(body))
	if im := srv.image(id); im["status"] == "active" {
		t.Fatalf("image active after a failed commit: %v", im)
	}
	if got := srv.json("GET", "/v2/images/"+id+"/transfers/"+tid, nil); got["phase"] != "transferring" {
		t.Fatalf("transfer after a failed finalize: %v", got)
	}

	cephCtl(t, "rgw-up")
	if fin := srv.json("POST", "/v2/images/"+id+"/transfers/"+tid+"/finalize", nil); fin["phase"] != "finished" {
		t.Fatalf("finalize with the gateway back: %v", fin)
	}
	if got := downloadFrom(t, srv, id); !bytes.Equal(got, data) {
		t.Fatal("the image differs after the gateway came back")
	}
}

func pgCtl(t *testing.T, cmd, dir string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(repoRoot(t), "scripts", "postgres.sh"), cmd, dir).Output()
	if err != nil {
		t.Fatalf("postgres.sh %s: %v", cmd, err)
	}
	return string(bytes.TrimSpace(out))
}

// PostgreSQL stops in the middle of a transfer (its own server, so that no
// other test is disturbed): requests fail with a 5xx in each protocol's
// format, no image turns active, nothing already written is lost; once the
// database is back, the rest of the transfer, finalize and downloads work.
func TestPostgresDownDuringTransfer(t *testing.T) {
	testenv.Engine(t, "HANGAR_TEST_POSTGRES", "PostgreSQL") // the same installation
	dir, err := os.MkdirTemp("/var/tmp", "hangar-pgfault.")
	if err != nil {
		t.Fatal(err)
	}
	dsn := pgCtl(t, "start", dir)
	t.Cleanup(func() { pgCtl(t, "stop", dir); os.RemoveAll(dir) })
	srv := startServer(t, t.TempDir(), nil, "--catalog", dsn)
	data := make([]byte, 8<<20)
	rand.Read(data)
	id := srv.create("pgfault")
	tr := srv.json("POST", "/v2/images/"+id+"/transfers", map[string]any{"ops": []string{"write"}, "size": len(data)})
	turl := on(srv, tr["transfer_url"].(string))
	half := len(data) / 2
	if err := putRange(t, turl, data[:half], 0); err != nil {
		t.Fatal(err)
	}
	srv.json("PATCH", "/images/"+tr["id"].(string), map[string]any{"op": "flush"})

	pgCtl(t, "pause", dir)
	if err := putRange(t, turl, data[half:], half); err == nil || !strings.Contains(err.Error(), "50") {
		t.Fatalf("write with the catalog down: %v, want a 5xx", err)
	}
	res, body := srv.do("GET", "/v2/images/"+id, nil, "Accept: application/json")
	if res.StatusCode < 500 || !strings.Contains(string(body), `"message"`) {
		t.Fatalf("show with the catalog down: %d %s", res.StatusCode, body)
	}

	pgCtl(t, "resume", dir)
	if err := putRange(t, turl, data[half:], half); err != nil {
		t.Fatalf("write with the catalog back: %v", err)
	}
	srv.json("PATCH", "/images/"+tr["id"].(string), map[string]any{"op": "flush"})
	if fin := srv.json("POST", "/v2/images/"+id+"/transfers/"+tr["id"].(string)+"/finalize", nil); fin["phase"] != "finished" {
		t.Fatalf("finalize: %v", fin)
	}
	if got := downloadFrom(t, srv, id); !bytes.Equal(got, data) {
		t.Fatal("the image differs")
	}
}

// A Gluster brick dies under an upload's store (a volume of its own, so no
// other test is disturbed): the upload fails with a 5xx, the image is not
// active and goes back to queued; once the brick is back, the same upload
// succeeds and the image reads back whole.
func TestGlusterBrickDownDuringUpload(t *testing.T) {
	engines(t)
	dir := testenv.Engine(t, "HANGAR_TEST_GLUSTER_DIR", "a GlusterFS volume")
	glCtl := func(cmd string) {
		if out, err := exec.Command(filepath.Join(repoRoot(t), "scripts", "gluster.sh"), cmd, dir).CombinedOutput(); err != nil {
			t.Fatalf("gluster.sh %s: %v\n%s", cmd, err, out)
		}
	}
	store := filepath.Join(dir, "fault", "e2e-"+filepath.Base(t.TempDir()))
	srv := startServer(t, t.TempDir(), nil, "--store", "file://"+store)
	data := make([]byte, 16<<20)
	rand.Read(data)
	id := srv.create("brick")

	glCtl("brick-down")
	t.Cleanup(func() { glCtl("brick-up") })
	res, body := srv.do("PUT", "/v2/images/"+id+"/file", bytes.NewReader(data), "Content-Type: application/octet-stream")
	if res.StatusCode != 503 {
		t.Fatalf("upload with the brick down: %d %s", res.StatusCode, body)
	}
	t.Logf("upload with the brick down: %d", res.StatusCode)
	if im := srv.image(id); im["status"] != "queued" {
		t.Fatalf("after the failed upload: %v", im["status"])
	}

	glCtl("brick-up")
	// The FUSE client reconnects on its own (18 s seen here); until then
	// uploads keep failing cleanly.
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		res, _ := srv.do("PUT", "/v2/images/"+id+"/file", bytes.NewReader(data), "Content-Type: application/octet-stream")
		if res.StatusCode == 204 {
			break
		}
		if res.StatusCode != 503 || time.Now().After(deadline) {
			t.Fatalf("upload after brick-up: %d", res.StatusCode)
		}
	}
	if got := downloadFrom(t, srv, id); !bytes.Equal(got, data) {
		t.Fatal("the image differs after the brick came back")
	}
}
