package cluster

// Rate-limit buckets that every replica shares, so that a caller limited
// to N calls a minute gets N across the replicas, not N per replica. The
// algorithm is GCRA, run atomically in Redis by go-redis/redis_rate: one
// script call (EVALSHA) a bucket, whose state is a single timestamp key
// that expires when the bucket is full again.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
)

// RetryInterval is how long a [Limiter] that found Redis unreachable
// answers [ErrUnavailable] at once, without a round trip, before one
// call tries Redis again.
const RetryInterval = time.Second

// Limiter checks rate limits against buckets held in Redis. Its callers
// keep a bucket of their own to fall back on: while Redis cannot be
// reached, [Limiter.Allow] fails fast with [ErrUnavailable], so that
// calls keep flowing under each replica's own limit (at most the limit
// per replica, not across them) and no call waits on a dead server. One
// warning is logged when an outage begins and one line when it ends;
// recovery needs nothing: once the cluster's heartbeat reaches Redis
// again, and at most [RetryInterval] after the last failure, one call
// tries Redis again, and from its success on the buckets are shared
// again.
//
// A Limiter is safe for concurrent use.
type Limiter struct {
	c  *Cluster
	rl *redis_rate.Limiter
	// retryAt is zero while Redis answers; after a failure it is when
	// (Unix nanoseconds) the next call may try it again.
	retryAt atomic.Int64
}

// Limiter returns a rate limiter over the cluster's shared buckets. Each
// call returns a new Limiter, with its own view of whether Redis answers,
// over the same buckets: keep one.
func (c *Cluster) Limiter() *Limiter {
	return &Limiter{c: c, rl: redis_rate.NewLimiter(c.rdb)}
}

// Allow takes one call from the bucket named key, which lets perSecond
// calls a second through on average and burst at once (at least 1). It
// costs one Redis round trip. When the bucket is empty, ok is false and
// retryAfter is how long until it lets one through.
//
// A bucket is named by key and by its limit: the same key with another
// limit (after a configuration reload) is a fresh, full bucket, as a
// replica's own buckets start afresh on a reload, and the old one
// expires by itself. Keys are binary-safe; the cluster's prefix is
// added.
//
// An error wraps [ErrUnavailable]: Redis did not answer, now or within
// the last [RetryInterval]. A perSecond that is not positive is no limit:
// ok, with no round trip.
func (l *Limiter) Allow(ctx context.Context, key string, perSecond float64, burst int) (ok bool, retryAfter time.Duration, err error) {
	if !(perSecond > 0) {
		return true, 0, nil
	}
	if !l.mayTry() {
		return false, 0, ErrUnavailable
	}
	lim := gcraLimit(perSecond, burst)
	res, err := l.rl.Allow(ctx, l.c.Key("limit:"+limitName(perSecond, lim.Burst)+":"+key), lim)
	if err != nil {
		l.failed(err)
		return false, 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	l.answered()
	if res.Allowed > 0 {
		return true, 0, nil
	}
	return false, max(res.RetryAfter, 0), nil
}

// mayTry reports whether a call may go to Redis: always while it
// answers, and after a failure to one call per RetryInterval; never
// while the cluster's heartbeat finds it away ([Cluster.Down]), so that
// a Redis that hangs rather than refuses keeps no call waiting once the
// heartbeat has noticed.
func (l *Limiter) mayTry() bool {
	if l.c.Down() {
		l.failed(errHeartbeat)
		return false
	}
	at := l.retryAt.Load()
	if at == 0 {
		return true
	}
	now := time.Now().UnixNano()
	// The call that moves retryAt on is the one that tries; the others
	// fall back meanwhile instead of queueing on a dead server.
	return now >= at && l.retryAt.CompareAndSwap(at, now+int64(RetryInterval))
}

var errHeartbeat = errors.New("the replica's heartbeat does not reach it")

func (l *Limiter) failed(err error) {
	if l.retryAt.Swap(time.Now().Add(RetryInterval).UnixNano()) == 0 {
		l.c.logger.Warn("cluster: Redis does not answer; each replica holds rate limits alone until it does",
			"error", err, "retryEvery", RetryInterval)
	}
}

func (l *Limiter) answered() {
	if l.retryAt.Load() != 0 && l.retryAt.Swap(0) != 0 {
		l.c.logger.Info("cluster: Redis answers again; rate limits are shared by the replicas again")
	}
}

// gcraLimit expresses perSecond as redis_rate's integer rate over a
// period: one call per emission interval.
func gcraLimit(perSecond float64, burst int) redis_rate.Limit {
	// Clamped to what a Duration holds: a limit of less than one call
	// in a century is as good as none getting through.
	period := min(max(float64(time.Second)/perSecond, 1), float64(math.MaxInt64/2))
	return redis_rate.Limit{
		Rate:   1,
		Period: time.Duration(period),
		Burst:  max(burst, 1),
	}
}

// limitName is the limit's part of a bucket's key, such as "10/5".
func limitName(perSecond float64, burst int) string {
	return strconv.FormatFloat(perSecond, 'g', -1, 64) + "/" + strconv.Itoa(burst)
}
