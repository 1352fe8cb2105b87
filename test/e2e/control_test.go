package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The ticket control API answers on the control unix socket and nowhere
// else; a ticket made there drives the data path, also on the data socket.
func TestControlSocket(t *testing.T) {
	curl := need(t, "curl", "Debian package curl")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	srv := startServer(t, data, nil)
	id := srv.create("ctl")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(curl, append([]string{"-sS", "-o", "-", "-w", " %{http_code}"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl %v: %v %s", args, err, out)
		}
		return string(out)
	}
	ctl := filepath.Join(data, "control.sock")
	sock := filepath.Join(data, "data.sock")
	ticket := `{"uuid": "tk", "size": 8, "ops": ["write"], "timeout": 60, "url": "hangar:` + id + `"}`
	if out := run("-X", "PUT", "--unix-socket", ctl, "-d", ticket, "http://localhost/tickets/tk"); !strings.HasSuffix(out, " 200") {
		t.Fatalf("PUT ticket on the control socket: %s", out)
	}
	if out := run("-X", "PUT", "-d", ticket, srv.url+"/tickets/tk2"); !strings.HasSuffix(out, " 404") {
		t.Fatalf("control API on the TCP listener: %s", out)
	}
	if out := run("-X", "PUT", "--unix-socket", sock, "-H", "Content-Range: bytes 0-7/*", "--data-binary", "12345678", "http://localhost/images/tk"); !strings.HasSuffix(out, " 200") {
		t.Fatalf("PUT on the data socket: %s", out)
	}
	if out := run("-X", "OPTIONS", srv.url+"/images/tk"); !strings.Contains(out, `"unix_socket":"`+sock+`"`) {
		t.Fatalf("OPTIONS does not advertise the data socket: %s", out)
	}
	if out := run("--unix-socket", ctl, "http://localhost/tickets/tk"); !strings.Contains(out, `"transferred":8`) {
		t.Fatalf("GET ticket: %s", out)
	}
	if out := run("-X", "DELETE", "--unix-socket", ctl, "http://localhost/tickets/tk"); !strings.HasSuffix(out, " 204") {
		t.Fatalf("DELETE ticket: %s", out)
	}
	if im := srv.image(id); im["status"] != "active" || im["size"] != float64(8) {
		t.Fatalf("after the ticket was removed: %v", im)
	}
}
