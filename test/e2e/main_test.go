// Package e2e runs the real hangar binary and real clients against it:
// python-glanceclient, the openstack CLI (openstacksdk), curl and strace.
// scripts/test.sh makes the Python venv and names it in HANGAR_TEST_VENV.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var hangarBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hangar-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hangarBin = filepath.Join(dir, "hangar")
	build := exec.Command("go", "build", "-o", hangarBin, "hangar/cmd/hangar")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building hangar:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// need finds a tool the test cannot run without. In CI a missing tool fails
// the test loudly; in a developer's quick run it skips and says why.
func need(t *testing.T, path, hint string) string {
	t.Helper()
	if p, err := exec.LookPath(path); err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found (%s)", path, hint)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip("SKIPPED in a quick run: " + msg + "; scripts/test.sh installs it")
	return ""
}

// venvTool returns a command from the test venv made by scripts/test.sh.
func venvTool(t *testing.T, name string) string {
	t.Helper()
	venv := os.Getenv("HANGAR_TEST_VENV")
	if venv == "" {
		venv = "/nonexistent-venv"
	}
	return need(t, filepath.Join(venv, "bin", name), "HANGAR_TEST_VENV must name the venv scripts/test.sh makes")
}
