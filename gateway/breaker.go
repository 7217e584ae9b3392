package gateway

import (
	"sync"
	"time"
)

// breaker opens after consecutive failures of the hop, failing calls
// fast for a pause, then lets one through to probe.
type breaker struct {
	mu       sync.Mutex
	failures int
	openTill time.Time
}

const (
	breakerThreshold = 5
	breakerPause     = 10 * time.Second
)

func (b *breaker) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Now().After(b.openTill)
}

// wait is how long the breaker stays open.
func (b *breaker) wait() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Until(b.openTill)
}

// record counts a call's outcome, and reports whether this failure
// opened the breaker.
func (b *breaker) record(ok bool) (opened bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ok {
		b.failures = 0
		return false
	}
	if b.failures++; b.failures >= breakerThreshold {
		b.openTill = time.Now().Add(breakerPause)
		b.failures = 0
		return true
	}
	return false
}

func (b *breaker) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures, b.openTill = 0, time.Time{}
}
