package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The bus is one Redis pub/sub connection per replica, shared by every
// follower of a stream and by the messages between replicas: channels
// are added and dropped as followers come and go, and a dispatcher routes
// each message to the subscribers of its channel without ever waiting on
// a slow one (it marks a gap instead, which the subscriber fills from the
// stored events).

type bus struct {
	ps  *redis.PubSub
	c   *Cluster
	mu  sync.Mutex
	sub map[string]map[*subscription]struct{}
	// confirm holds the subscribers waiting for Redis to confirm their
	// channel, by channel.
	confirm map[string][]chan struct{}
	recv    func([]byte)
	done    chan struct{}
}

type subscription struct {
	channel string
	c       chan string
	gap     chan struct{} // has a value when messages were dropped
}

// subscriberBuffer is how many messages wait for a slow follower before
// the bus drops them and marks a gap.
const subscriberBuffer = 64

func newBus(c *Cluster) *bus {
	b := &bus{c: c, sub: map[string]map[*subscription]struct{}{}, confirm: map[string][]chan struct{}{}, done: make(chan struct{})}
	b.ps = c.rdb.Subscribe(context.Background(), c.Key("all"), c.Key("replica:"+c.tag))
	go b.run()
	return b
}

func (b *bus) run() {
	defer close(b.done)
	ch := b.ps.ChannelWithSubscriptions(redis.WithChannelSize(4096))
	for m := range ch {
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind != "subscribe" {
				continue
			}
			b.mu.Lock()
			waiters := b.confirm[m.Channel]
			delete(b.confirm, m.Channel)
			subs := b.sub[m.Channel]
			for s := range subs {
				// A confirmation after a reconnection: what was published
				// while the connection was down is in the stored events.
				markGap(s)
			}
			b.mu.Unlock()
			for _, w := range waiters {
				close(w)
			}
		case *redis.Message:
			if m.Channel == b.c.Key("all") || m.Channel == b.c.Key("replica:"+b.c.tag) {
				b.mu.Lock()
				fn := b.recv
				b.mu.Unlock()
				if fn != nil {
					fn([]byte(m.Payload))
				}
				continue
			}
			b.mu.Lock()
			for s := range b.sub[m.Channel] {
				select {
				case s.c <- m.Payload:
				default:
					markGap(s)
				}
			}
			b.mu.Unlock()
		}
	}
}

func markGap(s *subscription) {
	select {
	case s.gap <- struct{}{}:
	default:
	}
}

// subscribe adds a subscriber to channel and returns once Redis has
// confirmed the channel (at once if it was subscribed already).
func (b *bus) subscribe(ctx context.Context, channel string) (*subscription, error) {
	s := &subscription{channel: channel, c: make(chan string, subscriberBuffer), gap: make(chan struct{}, 1)}
	b.mu.Lock()
	set := b.sub[channel]
	first := set == nil
	if first {
		set = map[*subscription]struct{}{}
		b.sub[channel] = set
	}
	set[s] = struct{}{}
	var wait chan struct{}
	if first || b.confirm[channel] != nil {
		wait = make(chan struct{})
		b.confirm[channel] = append(b.confirm[channel], wait)
	}
	b.mu.Unlock()
	if first {
		if err := b.ps.Subscribe(ctx, channel); err != nil {
			b.unsubscribe(s)
			return nil, err
		}
	}
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			b.unsubscribe(s)
			return nil, ctx.Err()
		case <-b.done:
			b.unsubscribe(s)
			return nil, errClosed
		}
	}
	return s, nil
}

func (b *bus) unsubscribe(s *subscription) {
	b.mu.Lock()
	set := b.sub[s.channel]
	delete(set, s)
	last := set != nil && len(set) == 0
	if last {
		delete(b.sub, s.channel)
	}
	b.mu.Unlock()
	if last {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.ps.Unsubscribe(ctx, s.channel)
	}
}

// Send implements [mcphttp.Cluster].
func (c *Cluster) Send(ctx context.Context, tag string, msg []byte) error {
	return c.rdb.Publish(ctx, c.Key("replica:"+tag), msg).Err()
}

// Broadcast implements [mcphttp.Cluster]; the sender gets its own message
// too, and is expected to drop it.
func (c *Cluster) Broadcast(ctx context.Context, msg []byte) error {
	return c.rdb.Publish(ctx, c.Key("all"), msg).Err()
}

// Receive implements [mcphttp.Cluster].
func (c *Cluster) Receive(fn func(msg []byte)) {
	c.bus.mu.Lock()
	defer c.bus.mu.Unlock()
	c.bus.recv = fn
}

// Liveness: each replica keeps a key alive:TAG that expires aliveTTL
// after its last renewal; a killed replica's key is gone within aliveTTL.
const (
	aliveTTL   = 3 * time.Second
	aliveEvery = time.Second
)

func (c *Cluster) heartbeat() {
	t := time.NewTicker(aliveEvery)
	defer t.Stop()
	for {
		c.renewAlive()
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
	}
}

// renewAlive renews this replica's liveness key, and notices two things
// the replicas must mend: an outage of Redis (the renewal fails), and a
// Redis that lost its data (restarted without persistence, however
// briefly): the epoch key, which never expires, is gone. After either,
// the shared state key is put back and OnRecover's function saves the
// sessions again.
func (c *Cluster) renewAlive() {
	ctx, cancel := context.WithTimeout(context.Background(), aliveEvery)
	defer cancel()
	var epoch *redis.BoolCmd
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, c.Key("alive:"+c.tag), c.opts.ReplicaID, aliveTTL)
		epoch = p.SetNX(ctx, c.Key("epoch"), "1", 0)
		return nil
	})
	if err != nil {
		if !c.down.Swap(true) {
			c.logger.Warn("cluster: Redis does not answer; serving on from what this replica holds", "error", err)
		}
		return
	}
	wiped := epoch.Val() && c.beat.Load()
	c.beat.Store(true)
	if wiped {
		c.logger.Warn("cluster: Redis lost its data (restarted without persistence?); saving this replica's sessions again")
	}
	if c.down.Swap(false) {
		c.logger.Info("cluster: Redis answers again")
	} else if !wiped {
		return
	}
	c.rdb.SetNX(ctx, c.Key("statekey"), c.stateKey, 0)
	c.mu.Lock()
	fn := c.recover
	c.mu.Unlock()
	if fn != nil {
		go fn()
	}
}

// OnRecover implements [mcphttp.Cluster]: fn is called when the liveness
// heartbeat reaches Redis again after it could not.
func (c *Cluster) OnRecover(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recover = fn
}

// Down reports whether the last heartbeat failed to reach Redis.
func (c *Cluster) Down() bool { return c.down.Load() }

// Alive implements [mcphttp.Cluster]. While Redis cannot be asked, every
// replica is taken to be alive: an outage of the store must not fail
// calls that are running.
func (c *Cluster) Alive(ctx context.Context, tag string) bool {
	if tag == c.tag {
		return true
	}
	n, err := c.rdb.Exists(ctx, c.Key("alive:"+tag)).Result()
	return err != nil || n == 1
}

// Peers implements [mcphttp.Cluster]: the replicas whose liveness key is
// there, but this one.
func (c *Cluster) Peers(ctx context.Context) ([]string, error) {
	var tags []string
	prefix := c.Key("alive:")
	iter := c.rdb.Scan(ctx, 0, prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		if tag := iter.Val()[len(prefix):]; tag != c.tag {
			tags = append(tags, tag)
		}
	}
	return tags, iter.Err()
}
