package gateway

import (
	"context"
	"sync"
	"time"
)

type clockKey struct{}

// untimedKey marks an upstream call that the upstream's timeout does not
// bound: a task's, which ends when its downstream caller cancels it or
// its time to live passes.
type untimedKey struct{}

// callClock is the timeout of an upstream call that can be parked: it
// stops while the call waits for its client, whose person may take
// longer to answer than the server is given to work.
type callClock struct {
	mu      sync.Mutex
	left    time.Duration
	since   time.Time
	timer   *time.Timer
	expired func()
}

// callContext bounds an upstream call by the upstream's timeout, on the
// call's clock where it has one.
func (u *upstream) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Value(untimedKey{}) != nil {
		return context.WithCancel(ctx)
	}
	clk, ok := ctx.Value(clockKey{}).(*callClock)
	if !ok {
		return context.WithTimeoutCause(ctx, u.timeout(), errCallTimeout)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	clk.mu.Lock()
	clk.left, clk.expired = u.timeout(), func() { cancel(errCallTimeout) }
	clk.mu.Unlock()
	clk.resume()
	return ctx, func() {
		clk.pause()
		cancel(context.Canceled)
	}
}

func (clk *callClock) pause() {
	clk.mu.Lock()
	defer clk.mu.Unlock()
	if clk.timer != nil && clk.timer.Stop() {
		clk.left -= time.Since(clk.since)
	}
	clk.timer = nil
}

func (clk *callClock) resume() {
	clk.mu.Lock()
	defer clk.mu.Unlock()
	if clk.expired == nil || clk.timer != nil {
		return
	}
	clk.since = time.Now()
	clk.timer = time.AfterFunc(max(clk.left, 0), clk.expired)
}
