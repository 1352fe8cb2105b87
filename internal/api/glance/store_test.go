package glance

import (
	"os"
	"path/filepath"
	"testing"
)

// storeObjects lists every file the store holds: committed, temp, partial.
func storeObjects(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, sub := range []string{"objects", "tmp", "partial"} {
		entries, err := os.ReadDir(filepath.Join(dir, "store", sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			out = append(out, sub+"/"+e.Name())
		}
	}
	return out
}
