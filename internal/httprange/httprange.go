// Package httprange parses the single byte range of an HTTP Range header
// (RFC 9110 §14.1.2) the way Hangar serves downloads: one range only, since
// multipart/byteranges would defeat sendfile and Glance refuses it too.
package httprange

import (
	"errors"
	"strconv"
	"strings"
)

var (
	// ErrMalformed is a Range header that is not a byte range.
	ErrMalformed = errors.New("malformed Range header")
	// ErrMultiple is a header asking for more than one range.
	ErrMultiple = errors.New("multiple ranges are not supported")
	// ErrUnsatisfiable is a range that starts past the end.
	ErrUnsatisfiable = errors.New("range not satisfiable")
)

// Range is a resolved byte range of a resource.
type Range struct {
	Start, Length int64
}

// End is the offset of the last byte, as Content-Range writes it.
func (r Range) End() int64 { return r.Start + r.Length - 1 }

// Parse resolves header against a resource of size bytes. Forms: "a-b",
// "a-" (to the end) and "-n" (the last n bytes); b past the end is clamped.
func Parse(header string, size int64) (Range, error) {
	unit, spec, ok := strings.Cut(header, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return Range{}, ErrMalformed
	}
	if strings.Contains(spec, ",") {
		return Range{}, ErrMultiple
	}
	first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return Range{}, ErrMalformed
	}
	if first == "" {
		return suffix(last, size)
	}
	start, err := number(first)
	if err != nil {
		return Range{}, err
	}
	end := size - 1
	if last != "" {
		if end, err = number(last); err != nil {
			return Range{}, err
		}
		if end < start {
			return Range{}, ErrMalformed
		}
		end = min(end, size-1)
	}
	if start >= size {
		return Range{}, ErrUnsatisfiable
	}
	return Range{Start: start, Length: end - start + 1}, nil
}

func suffix(last string, size int64) (Range, error) {
	n, err := number(last)
	if err != nil {
		return Range{}, err
	}
	if n == 0 || size == 0 {
		return Range{}, ErrUnsatisfiable
	}
	n = min(n, size)
	return Range{Start: size - n, Length: n}, nil
}

// number parses a non-negative decimal that fits in int64; signs, spaces
// and overflow are malformed.
func number(s string) (int64, error) {
	if s == "" || len(s) > 19 {
		return 0, ErrMalformed
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, ErrMalformed
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, ErrMalformed
	}
	return n, nil
}
