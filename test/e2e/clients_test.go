package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cli runs a client command with the given environment and returns stdout.
type cli struct {
	t   *testing.T
	bin string
	pre []string
	env []string
}

func (c cli) run(args ...string) string {
	c.t.Helper()
	out, err := c.try(args...)
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", filepath.Base(c.bin), strings.Join(args, " "), err, out)
	}
	return out
}

func (c cli) try(args ...string) (string, error) {
	cmd := exec.Command(c.bin, append(append([]string{}, c.pre...), args...)...)
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// field reads "| key | value |" from glanceclient's table output.
func field(t *testing.T, table, key string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\|\s*` + regexp.QuoteMeta(key) + `\s*\|\s*(.*?)\s*\|$`).FindStringSubmatch(table)
	if m == nil {
		t.Fatalf("no %q in:\n%s", key, table)
	}
	return m[1]
}

// glanceclient's image-show wraps the 128-character SHA-512 over two rows.
func wrappedField(t *testing.T, table, key string) string {
	t.Helper()
	lines := strings.Split(table, "\n")
	for i, l := range lines {
		if regexp.MustCompile(`^\|\s*` + key + `\s*\|`).MatchString(l) {
			v := strings.Trim(strings.SplitN(l, "|", 3)[2], " |")
			for _, next := range lines[i+1:] {
				if !strings.HasPrefix(next, "|  ") || !regexp.MustCompile(`^\|\s+\|`).MatchString(next) {
					break
				}
				v += strings.Trim(strings.SplitN(next, "|", 3)[2], " |")
			}
			return v
		}
	}
	t.Fatalf("no %q in:\n%s", key, table)
	return ""
}

// python-glanceclient 4.13, several commands in a row against one server
// (it caches the schema in ~/.glanceclient after the first).
func TestGlanceClient(t *testing.T) {
	bin := venvTool(t, "glance")
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "data"), nil)
	g := cli{t: t, bin: bin, env: []string{"OS_IMAGE_URL=" + srv.url, "OS_AUTH_TOKEN=anything", "HOME=" + dir}}

	img := randomFile(t, dir, "disk.img", 5<<20+123) // not a multiple of 4096
	md5, sha := sums(t, img)
	out := g.run("image-create", "--name", "g1", "--disk-format", "raw", "--container-format", "bare", "--file", img)
	id := field(t, out, "id")
	if field(t, out, "status") != "active" || field(t, out, "checksum") != md5 {
		t.Fatalf("image-create (chunked upload):\n%s", out)
	}
	show := g.run("image-show", id)
	if wrappedField(t, show, "os_hash_value") != sha || field(t, show, "size") != "5243003" {
		t.Fatalf("image-show: sha512 or size differ from sha512sum/file:\n%s", show)
	}

	for _, n := range []string{"g2", "g3"} {
		g.run("image-create", "--name", n, "--disk-format", "qcow2", "--container-format", "bare")
	}
	list := g.run("image-list", "--page-size", "1") // three pages, following next links
	for _, n := range []string{"g1", "g2", "g3"} {
		if !strings.Contains(list, "| "+n+" ") {
			t.Fatalf("image-list with paging lacks %s:\n%s", n, list)
		}
	}
	if l := g.run("image-list", "--limit", "2", "--page-size", "1"); strings.Count(l, "| g") != 2 {
		t.Fatalf("image-list --limit 2:\n%s", l)
	}

	upd := g.run("image-update", "--name", "g1-renamed", "--property", "os_distro=fedora", "--min-ram", "256", id)
	if field(t, upd, "name") != "g1-renamed" || field(t, upd, "os_distro") != "fedora" || field(t, upd, "min_ram") != "256" {
		t.Fatalf("image-update:\n%s", upd)
	}
	g.run("image-tag-update", id, "golden")
	if tags := field(t, g.run("image-show", id), "tags"); tags != `["golden"]` {
		t.Fatalf("tags after image-tag-update: %s", tags)
	}
	g.run("image-tag-delete", id, "golden")

	dl := filepath.Join(dir, "download.img")
	g.run("image-download", "--file", dl, id)
	sameFile(t, img, dl)

	g.run("image-delete", id)
	if out, err := g.try("image-show", id); err == nil {
		t.Fatalf("image-show after delete succeeded:\n%s", out)
	}
}

// openstackclient / openstacksdk with auth type none: sized uploads
// (Content-Length), JSON output, version discovery at /.
func TestOpenStackClient(t *testing.T) {
	bin := venvTool(t, "openstack")
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "data"), nil)
	o := cli{t: t, bin: bin, pre: []string{"--os-auth-type", "none", "--os-endpoint", srv.url}, env: []string{"HOME=" + dir}}
	js := func(args ...string) map[string]any {
		var m map[string]any
		out := o.run(append(args, "-f", "json")...)
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%v: not JSON: %s", args, out)
		}
		return m
	}

	img := randomFile(t, dir, "disk.raw", 3<<20+1)
	md5, sha := sums(t, img)
	created := js("image", "create", "--disk-format", "raw", "--container-format", "bare", "--file", img, "osc-1")
	id := created["id"].(string)
	if created["status"] != "active" || created["checksum"] != md5 {
		t.Fatalf("image create: %v", created)
	}
	shown := js("image", "show", id)
	props := shown["properties"].(map[string]any)
	if props["os_hash_value"] != sha || props["os_hash_algo"] != "sha512" || shown["size"] != float64(3<<20+1) {
		t.Fatalf("image show: %v", shown)
	}
	for _, n := range []string{"osc-2", "osc-3"} {
		o.run("image", "create", "--disk-format", "raw", "--container-format", "bare", n)
	}
	// Page one image at a time by marker (the CLI sorts each page itself,
	// so single-image pages are what shows the server's paging).
	seen := map[string]bool{}
	marker := []string{}
	for i := 0; i < 5; i++ {
		var page []map[string]any
		json.Unmarshal([]byte(o.run(append([]string{"image", "list", "--limit", "1", "-f", "json"}, marker...)...)), &page)
		if len(page) == 0 {
			break
		}
		if len(page) != 1 || seen[page[0]["ID"].(string)] {
			t.Fatalf("page %d: %v (seen %v)", i, page, seen)
		}
		seen[page[0]["ID"].(string)] = true
		marker = []string{"--marker", page[0]["ID"].(string)}
	}
	if len(seen) != 3 {
		t.Fatalf("paging by one found %d images, want 3", len(seen))
	}

	o.run("image", "set", "--name", "osc-renamed", "--property", "hw_disk_bus=scsi", "--tag", "golden", id)
	shown = js("image", "show", id)
	if shown["name"] != "osc-renamed" || shown["properties"].(map[string]any)["hw_disk_bus"] != "scsi" ||
		len(shown["tags"].([]any)) != 1 {
		t.Fatalf("after image set: %v", shown)
	}
	dl := filepath.Join(dir, "saved.raw")
	o.run("image", "save", "--file", dl, id)
	sameFile(t, img, dl)
	o.run("image", "delete", id)
	if out, err := o.try("image", "show", id); err == nil {
		t.Fatalf("image show after delete succeeded: %s", out)
	}
}
