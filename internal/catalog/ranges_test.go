package catalog

import (
	"fmt"
	"testing"
)

func TestAddRanges(t *testing.T) {
	cases := []struct {
		in, add []Range
		want    string
	}{
		{nil, []Range{{10, 5}}, "[{10 5}]"},
		{[]Range{{0, 10}}, []Range{{10, 5}}, "[{0 15}]"},
		{[]Range{{0, 10}}, []Range{{20, 5}, {5, 2}}, "[{0 10} {20 5}]"},
		{[]Range{{20, 5}}, []Range{{0, 30}}, "[{0 30}]"},
		{[]Range{{0, 1}}, []Range{{3, 0}}, "[{0 1}]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(AddRanges(c.in, c.add...)); got != c.want {
			t.Errorf("AddRanges(%v, %v) = %s, want %s", c.in, c.add, got, c.want)
		}
	}
}

func TestSubtractRanges(t *testing.T) {
	done := []Range{{10, 10}, {30, 5}}
	cases := []struct {
		r    Range
		want string
	}{
		{Range{0, 50}, "[{0 10} {20 10} {35 15}]"},
		{Range{12, 5}, "[]"},
		{Range{15, 20}, "[{20 10}]"},
		{Range{40, 5}, "[{40 5}]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(SubtractRanges(c.r, done)); got != c.want && !(c.want == "[]" && got == "[]") {
			t.Errorf("SubtractRanges(%v) = %s, want %s", c.r, got, c.want)
		}
	}
}
