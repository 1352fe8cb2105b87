package httprange

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	const size = 65536
	cases := []struct {
		header string
		want   Range
		err    error
	}{
		{"bytes=0-99", Range{0, 100}, nil},
		{"bytes=-100", Range{65436, 100}, nil},
		{"bytes=65000-", Range{65000, 536}, nil},
		{"bytes=0-999999", Range{0, size}, nil},
		{"bytes=65535-65535", Range{65535, 1}, nil},
		{"BYTES = 1-1", Range{1, 1}, nil},
		{"bytes=-999999", Range{0, size}, nil},
		{"bytes=999999-", Range{}, ErrUnsatisfiable},
		{"bytes=65536-65537", Range{}, ErrUnsatisfiable},
		{"bytes=-0", Range{}, ErrUnsatisfiable},
		{"bytes=0-9,20-29", Range{}, ErrMultiple},
		{"bytes=5-2", Range{}, ErrMalformed},
		{"bytes=abc", Range{}, ErrMalformed},
		{"bytes=-", Range{}, ErrMalformed},
		{"bytes=--5", Range{}, ErrMalformed},
		{"bytes=+5-6", Range{}, ErrMalformed},
		{"bytes=99999999999999999999-", Range{}, ErrMalformed},
		{"bytes=9223372036854775807-", Range{}, ErrUnsatisfiable},
		{"items=0-1", Range{}, ErrMalformed},
		{"0-1", Range{}, ErrMalformed},
		{"", Range{}, ErrMalformed},
	}
	for _, c := range cases {
		got, err := Parse(c.header, size)
		if !errors.Is(err, c.err) || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", c.header, got, err, c.want, c.err)
		}
	}
	if _, err := Parse("bytes=0-", 0); !errors.Is(err, ErrUnsatisfiable) {
		t.Errorf("empty resource: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"bytes=0-99", "bytes=-5", "bytes=7-", "bytes=1-2,3-4", "bytes=x"} {
		f.Add(s, int64(100))
	}
	f.Fuzz(func(t *testing.T, header string, size int64) {
		if size < 0 {
			size = -size
		}
		if size < 0 {
			return
		}
		r, err := Parse(header, size)
		if err != nil {
			return
		}
		if r.Start < 0 || r.Length <= 0 || r.Start+r.Length > size || r.End() < r.Start {
			t.Fatalf("Parse(%q, %d) = %+v: outside the resource", header, size, r)
		}
	})
}
