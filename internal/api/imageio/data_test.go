package imageio

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"hangar/internal/blkhash"
	"hangar/internal/catalog"
	"hangar/internal/transfer"
)

func put(t *testing.T, url string, off int64, data []byte, flush string) resp {
	return do(t, "PUT", url+"?flush="+flush, data,
		fmt.Sprintf("Content-Range: bytes %d-%d/*", off, off+int64(len(data))-1))
}

// 8 connections write interleaved 1 MiB ranges in random order; the image
// finalized from them equals the source byte for byte, with the checksums
// a whole-file upload records.
func TestConcurrentWritersRandomOrder(t *testing.T) {
	e := newEnv(t, transfer.Config{})
	const size = 32<<20 + 12345
	src := make([]byte, size)
	rand.Read(src)
	id := e.image()
	url, tr := e.ticket(id, size, "write")

	var chunks []int64
	for off := int64(0); off < size; off += 1 << 20 {
		chunks = append(chunks, off)
	}
	mrand.Shuffle(len(chunks), func(i, j int) { chunks[i], chunks[j] = chunks[j], chunks[i] })
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(chunks); i += 8 {
				off := chunks[i]
				end := min(off+1<<20, size)
				if r := put(t, url, off, src[off:end], "n"); r.status != 200 {
					t.Errorf("PUT at %d: %d %s", off, r.status, r.body)
				}
			}
		}(w)
	}
	wg.Wait()
	if r := do(t, "PATCH", url, `{"op":"flush"}`); r.status != 200 {
		t.Fatalf("flush: %d", r.status)
	}
	sum := decode[map[string]any](t, do(t, "GET", url+"/checksum", nil).body)
	h := blkhash.New(blkhash.BlockSize)
	h.Write(src)
	if sum["checksum"] != h.HexSum() {
		t.Fatalf("block checksum %v, want %s", sum["checksum"], h.HexSum())
	}
	_, block, err := e.m.Finalize(context.Background(), tr.ID)
	if err != nil || block != h.HexSum() {
		t.Fatalf("finalize: block checksum %q, want %q (%v)", block, h.HexSum(), err)
	}
	im := e.st.WaitChecksums(t, id)
	m := md5.Sum(src)
	if im.Status != catalog.StatusActive || *im.Size != size || *im.Checksum != hex.EncodeToString(m[:]) {
		t.Fatalf("after finalize: %s %v %v", im.Status, *im.Size, *im.Checksum)
	}
	// A read ticket on the active image serves the same bytes, ranged.
	rurl, _ := e.ticket(id, 0, "read")
	r := do(t, "GET", rurl, nil, "Range: bytes=1000-2999999")
	if r.status != 206 || !bytes.Equal(r.body, src[1000:3000000]) ||
		r.header.Get("Content-Range") != fmt.Sprintf("bytes 1000-2999999/%d", size) {
		t.Fatalf("ranged read: %d %q", r.status, r.header.Get("Content-Range"))
	}
	if r := do(t, "GET", rurl, nil); r.status != 200 || !bytes.Equal(r.body, src) {
		t.Fatalf("full read: %d, %d bytes", r.status, len(r.body))
	}
}

func TestOptionsAndExtents(t *testing.T) {
	e := newEnv(t, transfer.Config{})
	url, _ := e.ticket(e.image(), 8<<20, "write")
	r := do(t, "OPTIONS", url, nil)
	opts := decode[map[string]any](t, r.body)
	if r.header.Get("Allow") != "OPTIONS,GET,PUT,PATCH" || opts["max_writers"].(float64) < 8 || opts["max_readers"].(float64) < 8 ||
		fmt.Sprint(opts["features"]) != "[checksum extents flush zero]" {
		t.Fatalf("OPTIONS: %v %v", r.header, opts)
	}
	put(t, url, 1<<20, bytes.Repeat([]byte{1}, 1<<20), "y")
	put(t, url, 5<<20, bytes.Repeat([]byte{2}, 1<<20), "y")
	do(t, "PATCH", url, `{"op":"zero","offset":5242880,"size":1048576,"flush":true}`)
	exts := decode[[]extent](t, do(t, "GET", url+"/extents?context=zero", nil).body)
	want := []extent{{0, 1 << 20, true, true}, {1 << 20, 1 << 20, false, false}, {2 << 20, 6 << 20, true, true}}
	if fmt.Sprint(exts) != fmt.Sprint(want) {
		t.Fatalf("extents %v, want %v (holes reported, zeroed range punched)", exts, want)
	}
	if r := do(t, "OPTIONS", e.data+"/images/*", nil); r.status != 200 || !strings.Contains(string(r.body), "features") {
		t.Fatalf("OPTIONS *: %d %s", r.status, r.body)
	}
}

// Bad input gets imageio's 4xx and touches nothing outside its range.
func TestBadInput(t *testing.T) {
	e := newEnv(t, transfer.Config{})
	const size = 4 << 20
	id := e.image()
	url, tr := e.ticket(id, size, "write")
	base := bytes.Repeat([]byte{7}, size)
	put(t, url, 0, base, "y")
	cases := []struct {
		name, method, query, body string
		headers                   []string
		status                    int
		text                      string
	}{
		{"range past the end", "PUT", "", "xx", []string{"Content-Range: bytes 4194303-4194304/*"}, 416, "out of allowed range"},
		{"negative offset", "PUT", "", "xx", []string{"Content-Range: bytes -2-0/*"}, 400, "Invalid Content-Range"},
		{"overflowing offset", "PUT", "", "xx", []string{"Content-Range: bytes 9223372036854775807-9223372036854775808/*"}, 400, "Invalid Content-Range"},
		{"range disagrees with length", "PUT", "", "xxx", []string{"Content-Range: bytes 0-1/*"}, 400, "does not match"},
		{"garbage range", "PUT", "", "xx", []string{"Content-Range: items 0-1"}, 400, "Invalid Content-Range"},
		{"bad flush", "PUT", "?flush=maybe", "xx", nil, 400, "Invalid flush"},
		{"zero out of bounds", "PATCH", "", `{"op":"zero","offset":4194000,"size":1000}`, nil, 416, "out of allowed range"},
		{"zero negative", "PATCH", "", `{"op":"zero","offset":-1,"size":10}`, nil, 400, "Invalid value for 'offset'"},
		{"zero huge", "PATCH", "", `{"op":"zero","offset":0,"size":99999999999999999999}`, nil, 400, "Invalid value for 'size'"},
		{"zero missing size", "PATCH", "", `{"op":"zero","offset":0}`, nil, 400, "Missing required value for 'size'"},
		{"unknown op", "PATCH", "", `{"op":"trim"}`, nil, 400, "Unsupported value 'trim' for 'op'"},
		{"bad JSON", "PATCH", "", `{"op":`, nil, 400, "Invalid JSON"},
		{"suffix range", "GET", "", "", []string{"Range: bytes=-512"}, 416, "suffix-byte-range-spec"},
		{"multiple ranges", "GET", "", "", []string{"Range: bytes=0-1,5-6"}, 416, "multiple ranges"},
		{"read past the end", "GET", "", "", []string{"Range: bytes=4194304-4194400"}, 416, "out of allowed range"},
		{"dirty extents", "GET", "/extents?context=dirty", "", nil, 404, "dirty"},
		{"bad checksum algorithm", "GET", "/checksum?algorithm=md4", "", nil, 400, "Unsupported algorithm"},
		{"bad block size", "GET", "/checksum?block_size=1000", "", nil, 400, "Invalid block_size"},
		{"HEAD", "HEAD", "", "", nil, 405, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := url + c.query
			if strings.HasPrefix(c.query, "/") {
				u = url + c.query
			}
			r := do(t, c.method, u, c.body, c.headers...)
			if r.status != c.status || !strings.Contains(string(r.body), c.text) {
				t.Fatalf("%d %q, want %d %q", r.status, r.body, c.status, c.text)
			}
			if c.method != "HEAD" && !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
				t.Fatalf("error body type %q", r.header.Get("Content-Type"))
			}
		})
	}
	// Chunked body (no Content-Length) is refused before anything is written.
	req, _ := http.NewRequest("PUT", url, struct{ *strings.Reader }{strings.NewReader("chunked")})
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 400 {
		t.Fatalf("chunked PUT: %v %v", res.StatusCode, err)
	}
	res.Body.Close()
	if r := do(t, "GET", url, nil); !bytes.Equal(r.body, base) {
		t.Fatal("bad input changed the image")
	}
	// Nothing became active.
	if im, _ := e.cat.GetImage(context.Background(), id); im.Status != catalog.StatusSaving {
		t.Fatalf("image is %s", im.Status)
	}
	_ = tr
}

func TestTicketRules(t *testing.T) {
	e := newEnv(t, transfer.Config{})
	id := e.image()
	url, tr := e.ticket(id, 1<<20, "write")
	put(t, url, 0, make([]byte, 1<<20), "y")
	if _, _, err := e.m.Finalize(context.Background(), tr.ID); err != nil {
		t.Fatal(err)
	}
	forbidden := func(what string, r resp) {
		t.Helper()
		if r.status != 403 || !r.close || !strings.Contains(string(r.body), "You are not allowed to access this resource") {
			t.Errorf("%s: %d %s", what, r.status, r.body)
		}
	}
	forbidden("write after finalize", put(t, url, 0, []byte("x"), "y"))
	forbidden("unknown ticket", do(t, "GET", e.data+"/images/nope", nil))

	rurl, _ := e.ticket(id, 0, "read")
	forbidden("write on a read ticket", put(t, rurl, 0, []byte("x"), "y"))
	forbidden("zero on a read ticket", do(t, "PATCH", rurl, `{"op":"zero","offset":0,"size":1}`))
	if r := do(t, "OPTIONS", rurl, nil); r.header.Get("Allow") != "OPTIONS,GET" || strings.Contains(string(r.body), "zero") {
		t.Errorf("read ticket OPTIONS: %v %s", r.header.Get("Allow"), r.body)
	}

	// A second image, cancelled: data discarded, image queued, ticket dead.
	id2 := e.image()
	url2, tr2 := e.ticket(id2, 1<<20, "write")
	put(t, url2, 0, make([]byte, 4096), "y")
	if err := e.m.Create(context.Background(), &catalog.Transfer{ImageID: id2, Ops: []string{"write"}, Size: 10}); err == nil {
		t.Error("second write transfer on one image accepted")
	}
	if err := e.m.Cancel(context.Background(), tr2.ID, false); err != nil {
		t.Fatal(err)
	}
	forbidden("write after cancel", put(t, url2, 0, []byte("x"), "y"))
	if im, _ := e.cat.GetImage(context.Background(), id2); im.Status != catalog.StatusQueued {
		t.Errorf("after cancel image is %s", im.Status)
	}
	if tr, _ := e.cat.GetTransfer(context.Background(), tr2.ID); tr.Phase != catalog.PhaseCancelled {
		t.Errorf("after cancel transfer is %s", tr.Phase)
	}
	if _, err := e.store.OpenPartial(context.Background(), id2, 5); err != nil {
		t.Errorf("partial of cancelled transfer still there (reopen with another size worked only if removed): %v", err)
	}
}

func TestExpiryAndInactivity(t *testing.T) {
	e := newEnv(t, transfer.Config{})
	id := e.image()
	tr := &catalog.Transfer{ImageID: id, Ops: []string{"write"}, Size: 4096, Timeout: 3600, InactivityTimeout: 1}
	if err := e.m.Create(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	url := e.data + "/images/" + tr.ID
	if r := put(t, url, 0, make([]byte, 10), "n"); r.status != 200 {
		t.Fatalf("first write: %d", r.status)
	}
	time.Sleep(2100 * time.Millisecond)
	if r := put(t, url, 0, make([]byte, 10), "n"); r.status != 403 || !strings.Contains(string(r.body), "inactive") {
		t.Fatalf("write after inactivity: %d %s", r.status, r.body)
	}
	if err := e.m.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	if im, _ := e.cat.GetImage(context.Background(), id); im.Status != catalog.StatusQueued {
		t.Fatalf("reaped transfer left image %s", im.Status)
	}

	id2 := e.image()
	tr2 := &catalog.Transfer{ImageID: id2, Ops: []string{"write"}, Size: 4096, Timeout: 1}
	e.m.Create(context.Background(), tr2)
	time.Sleep(1100 * time.Millisecond)
	if r := put(t, e.data+"/images/"+tr2.ID, 0, []byte("x"), "n"); r.status != 403 || !strings.Contains(string(r.body), "expired") {
		t.Fatalf("write after expiry: %d %s", r.status, r.body)
	}
}
