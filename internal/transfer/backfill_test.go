package transfer

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The backfill's reads wait while the data path is busy, but never longer
// than their budget, and stop when the context ends.
func TestPoliteReaderYieldsWithinBudget(t *testing.T) {
	cases := []struct {
		name     string
		busyFor  time.Duration
		budget   time.Duration
		min, max time.Duration
	}{
		{"idle reads at once", 0, time.Second, 0, 100 * time.Millisecond},
		{"waits for busy to end", 200 * time.Millisecond, time.Second, 150 * time.Millisecond, 900 * time.Millisecond},
		{"budget caps the wait", time.Hour, 150 * time.Millisecond, 100 * time.Millisecond, 900 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			busy := func() bool { return time.Since(start) < c.busyFor }
			r := &politeReader{ctx: context.Background(), r: strings.NewReader("data"), busy: busy, budget: c.budget}
			buf := make([]byte, 4)
			if n, err := r.Read(buf); n != 4 || err != nil {
				t.Fatalf("read %d, %v", n, err)
			}
			if d := time.Since(start); d < c.min || d > c.max {
				t.Fatalf("read after %v, want %v..%v", d, c.min, c.max)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	r := &politeReader{ctx: ctx, r: strings.NewReader("data"), budget: time.Hour,
		busy: func() bool { calls.Add(1); return true }}
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := r.Read(make([]byte, 4)); err != context.Canceled {
		t.Fatalf("read after cancel: %v", err)
	}
}
