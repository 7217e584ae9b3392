package gateway

import (
	"slices"
	"sync"
	"time"
)

// callStats are an upstream's calls as its status shows them: how many,
// how many failed, and the latency of the last ones.
type callStats struct {
	mu     sync.Mutex
	calls  int64
	errors int64
	last   [512]time.Duration // a ring of the latest durations
	n      int                // durations written, in all
}

func (s *callStats) record(d time.Duration, failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if failed {
		s.errors++
	}
	s.last[s.n%len(s.last)] = d
	s.n++
}

// snapshot returns the counts and the 50th and 99th percentiles of the
// latest durations (zero without any).
func (s *callStats) snapshot() (calls, errors int64, p50, p99 time.Duration) {
	s.mu.Lock()
	ds := slices.Clone(s.last[:min(s.n, len(s.last))])
	calls, errors = s.calls, s.errors
	s.mu.Unlock()
	if len(ds) == 0 {
		return calls, errors, 0, 0
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return calls, errors, at(0.50), at(0.99)
}
