package client

import (
	"sync/atomic"
	"time"
)

// Progress counts what a transfer moved; safe for concurrent use. The
// terminal renderer lives in the CLI; this is only the counter.
type Progress struct {
	Total   int64 // bytes of the image
	Data    atomic.Int64
	Zero    atomic.Int64
	DataOps atomic.Int64
	ZeroOps atomic.Int64
	Started time.Time
	Resent  atomic.Int64 // bytes sent again after a failure
}

// Done is the bytes accounted for, data and zeros.
func (p *Progress) Done() int64 { return p.Data.Load() + p.Zero.Load() }
