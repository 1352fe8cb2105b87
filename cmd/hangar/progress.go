package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"hangar/internal/client"
)

// reporter renders a transfer's progress: a live bar on a terminal, one
// JSON line a second with -o json, nothing otherwise.
type reporter struct {
	p    *client.Progress
	stop chan struct{}
	done chan struct{}
}

func startReporter(p *client.Progress, w io.Writer, mode, what string) *reporter {
	r := &reporter{p: p, stop: make(chan struct{}), done: make(chan struct{})}
	go r.run(w, mode, what)
	return r
}

func (r *reporter) run(w io.Writer, mode, what string) {
	defer close(r.done)
	if mode == "" {
		<-r.stop
		return
	}
	var bar *progressbar.ProgressBar
	tick := time.NewTicker(time.Second)
	if mode == "bar" {
		tick.Reset(100 * time.Millisecond)
		bar = progressbar.NewOptions64(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
			progressbar.OptionShowBytes(true), progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			if bar != nil {
				bar.Finish()
			}
			return
		case <-tick.C:
			if bar != nil {
				if r.p.Total > 0 && bar.GetMax64() != r.p.Total {
					bar.ChangeMax64(r.p.Total)
				}
				bar.Set64(r.p.Done())
			} else {
				json.NewEncoder(w).Encode(r.snapshot())
			}
		}
	}
}

type snapshot struct {
	Total   int64   `json:"total_bytes"`
	Done    int64   `json:"done_bytes"`
	Data    int64   `json:"data_bytes"`
	Zero    int64   `json:"zero_bytes"`
	Seconds float64 `json:"seconds"`
	Rate    float64 `json:"bytes_per_second"`
	ETA     float64 `json:"eta_seconds"`
}

func (r *reporter) snapshot() snapshot {
	s := snapshot{Total: r.p.Total, Done: r.p.Done(), Data: r.p.Data.Load(), Zero: r.p.Zero.Load(),
		Seconds: time.Since(r.p.Started).Seconds()}
	if s.Seconds > 0 {
		s.Rate = float64(s.Done) / s.Seconds
	}
	if s.Rate > 0 {
		s.ETA = float64(s.Total-s.Done) / s.Rate
	}
	return s
}

// finish stops the renderer and prints the summary line, in the spirit of
// nbdkit's stats filter: ops, bytes, seconds and rate for data and zeros.
func (r *reporter) finish(w io.Writer, mode string) {
	close(r.stop)
	<-r.done
	secs := time.Since(r.p.Started).Seconds()
	data, zero := r.p.Data.Load(), r.p.Zero.Load()
	if mode == "json" {
		json.NewEncoder(w).Encode(map[string]any{"summary": true, "data_ops": r.p.DataOps.Load(), "data_bytes": data,
			"zero_ops": r.p.ZeroOps.Load(), "zero_bytes": zero, "resent_bytes": r.p.Resent.Load(), "seconds": secs})
		return
	}
	fmt.Fprintf(w, "data: %d ops, %s, %.2f s, %s/s; zero: %d ops, %s\n", r.p.DataOps.Load(), human(data), secs,
		human(int64(float64(data)/max(secs, 1e-9))), r.p.ZeroOps.Load(), human(zero))
}

func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.2f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
