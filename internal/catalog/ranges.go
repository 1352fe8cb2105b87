package catalog

import "sort"

// Range is a byte range [Off, Off+Len).
type Range struct {
	Off int64 `json:"start"`
	Len int64 `json:"length"`
}

// AddRanges merges add into rs and returns the sorted, coalesced union.
func AddRanges(rs []Range, add ...Range) []Range {
	all := append(append([]Range{}, rs...), add...)
	sort.Slice(all, func(i, j int) bool { return all[i].Off < all[j].Off })
	var out []Range
	for _, r := range all {
		if r.Len <= 0 {
			continue
		}
		if n := len(out); n > 0 && r.Off <= out[n-1].Off+out[n-1].Len {
			out[n-1].Len = max(out[n-1].Off+out[n-1].Len, r.Off+r.Len) - out[n-1].Off
			continue
		}
		out = append(out, r)
	}
	return out
}

// SubtractRanges returns the parts of r not covered by done (sorted,
// coalesced).
func SubtractRanges(r Range, done []Range) []Range {
	var out []Range
	pos, end := r.Off, r.Off+r.Len
	for _, d := range done {
		if d.Off+d.Len <= pos || d.Off >= end {
			continue
		}
		if d.Off > pos {
			out = append(out, Range{Off: pos, Len: d.Off - pos})
		}
		pos = max(pos, d.Off+d.Len)
	}
	if pos < end {
		out = append(out, Range{Off: pos, Len: end - pos})
	}
	return out
}
