// Package workpool runs short tasks on goroutines that stay for a moment
// after their task ends, so that the next task reuses one.
//
// A new goroutine starts with a small stack, and a request handler that
// encodes JSON grows it: the runtime copies the stack a few times per
// request, which profiles of the HTTP transport showed as several percent
// of all CPU. A goroutine that is reused keeps its grown stack.
package workpool

import "time"

// idleTimeout is how long a goroutine waits for more work. Under load a
// task arrives within microseconds; when load stops, the goroutines go
// soon after.
const idleTimeout = 2 * time.Second

var work = make(chan func())

// Go runs f on a waiting goroutine, or on a new one if none is waiting.
// It never blocks and never queues: f starts at once, as with go f().
func Go(f func()) {
	select {
	case work <- f:
	default:
		go worker(f)
	}
}

func worker(f func()) {
	var t *time.Timer
	for {
		f()
		f = nil // keep nothing of the task alive while waiting
		if t == nil {
			t = time.NewTimer(idleTimeout)
		} else {
			t.Reset(idleTimeout)
		}
		select {
		case f = <-work:
		case <-t.C:
			return
		}
	}
}
