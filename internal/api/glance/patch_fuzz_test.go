package glance

import (
	"testing"

	"hangar/internal/auth"
	"hangar/internal/catalog"
)

// FuzzDecodePatch feeds arbitrary bodies to the JSON-patch decoder and
// applies whatever it accepts to an image: nothing may panic, and no
// accepted patch may touch what clients must never set.
func FuzzDecodePatch(f *testing.F) {
	seeds := []string{
		`[{"op":"replace","path":"/name","value":"x"}]`,
		`[{"op":"add","path":"/os_distro","value":"cirros"},{"op":"remove","path":"/os_distro"}]`,
		`[{"op":"replace","path":"/status","value":"active"}]`,
		`[{"op":"add","path":"/tags","value":["a","b"]}]`,
		`[{"op":"replace","path":"/min_ram","value":99999999999999999999}]`,
		`[{"add":"/name","value":"v2.0"}]`,
		`[{"op":"add","path":"/a~1b~0c","value":"esc"}]`,
		`{}`, `[1]`, `[`, ``,
	}
	for _, s := range seeds {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, v20 bool) {
		ops, err := decodePatch(body, v20)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("decode error %T is not an API error", err)
			}
			return
		}
		size, sum := int64(5), "abc"
		im := &catalog.Image{ID: "11111111-2222-3333-4444-555555555555", Status: catalog.StatusActive,
			Visibility: catalog.Shared, Size: &size, Checksum: &sum, Tags: []string{}}
		if err := applyPatch(im, auth.Identity{Admin: true}, ops); err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("apply error %T is not an API error", err)
			}
			return
		}
		if im.ID != "11111111-2222-3333-4444-555555555555" || im.Status != catalog.StatusActive ||
			*im.Size != 5 || *im.Checksum != "abc" || im.Visibility == catalog.Public {
			t.Fatalf("patch %q changed a protected field: %+v", body, im)
		}
		if im.MinRAM < 0 || im.MinDisk < 0 {
			t.Fatalf("patch %q set a negative minimum", body)
		}
		for _, p := range im.Properties {
			if readOnly(p.Key) || reserved(p.Key) {
				t.Fatalf("patch %q set property %q", body, p.Key)
			}
		}
	})
}
