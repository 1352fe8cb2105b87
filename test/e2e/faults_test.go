package e2e

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
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
	s3Env(t)
	dir := os.Getenv("HANGAR_TEST_CEPH_DIR")
	if dir == "" {
		t.Fatal("HANGAR_TEST_CEPH_DIR is not set: scripts/test.sh starts Ceph")
	}
	ep, err := os.ReadFile(filepath.Join(dir, "fault.endpoint"))
	if err != nil {
		t.Fatal(err)
	}
	bucket := s3Bucket(t)
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
