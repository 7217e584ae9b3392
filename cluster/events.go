package cluster

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/mcphttp"
)

// Events of SSE streams live in Redis Streams, one per SSE stream, bounded
// in length (Options.MaxEvents) and expiring when unwritten for
// Options.EventTTL. An event numbered n has the entry id 1-n, so that the
// head (0) is a valid id and entries sort by number. Each append also
// publishes the event on the stream's channel, which followers subscribe
// to; a follower that sees a gap in the numbers reads the entries.

func (c *Cluster) streamKey(key, stream string) string { return c.Key("ev:" + key + "|" + stream) }
func (c *Cluster) streamSet(key string) string         { return c.Key("evs:" + key) }
func (c *Cluster) streamChan(key, stream string) string {
	return c.Key("evc:" + key + "|" + stream)
}

// appendScript numbers the event when asked (ARGV[1] = 0: one more than
// the stream's last), adds it, renews the expiries, records the stream
// among its session's, and publishes "seq|final|data" to followers: one
// round trip, and numbers that several replicas writing one stream
// cannot duplicate.
var appendScript = redis.NewScript(`
local seq = tonumber(ARGV[1])
if seq == 0 and ARGV[8] == '1' then
  seq = 1
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  if #last > 0 then seq = tonumber(string.match(last[1][1], '%-(%d+)$')) + 1 end
end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], '1-' .. seq, 'd', ARGV[2], 'f', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('SADD', KEYS[2], ARGV[7])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
redis.call('PUBLISH', ARGV[6], seq .. '|' .. ARGV[3] .. '|' .. ARGV[2])
return seq
`)

// appendOnceScript is appendScript for news told by several replicas:
// the first append of a change (KEYS[3], kept ARGV[2] ms) is numbered and
// stored, the others store nothing and return 0.
var appendOnceScript = redis.NewScript(`
if redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[2]) == false then return 0 end
local seq = 1
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last > 0 then seq = tonumber(string.match(last[1][1], '%-(%d+)$')) + 1 end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '1-' .. seq, 'd', ARGV[1], 'f', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PUBLISH', ARGV[4], seq .. '|0|' .. ARGV[1])
return seq
`)

// onceBatch is how many appends of news go to Redis in one pipeline.
const onceBatch = 512

// AppendOnce implements [mcphttp.Cluster]: the appends go in pipelines of
// onceBatch script calls, one round trip each, rather than one round trip
// a session (BenchmarkNewsFanOut: 10,000 sessions' news in 4.3 s one by
// one on this 2-core machine; see the commit for the pipelined figure).
func (c *Cluster) AppendOnce(ctx context.Context, stream, once string, events map[string][]byte) error {
	keys := make([]string, 0, len(events))
	for k := range events {
		keys = append(keys, k)
	}
	for len(keys) > 0 {
		n := min(len(keys), onceBatch)
		batch := keys[:n]
		keys = keys[n:]
		run := func() error {
			_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, key := range batch {
					appendOnceScript.EvalSha(ctx, p,
						[]string{c.streamKey(key, stream), c.streamSet(key), c.Key("once:" + key + "|" + once)},
						events[key], c.opts.EventTTL.Milliseconds(), c.opts.MaxEvents, c.streamChan(key, stream), stream)
				}
				return nil
			})
			return err
		}
		err := run()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			// Redis restarted and forgot the script: load it, once.
			if err = appendOnceScript.Load(ctx, c.rdb).Err(); err == nil {
				err = run()
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// AppendEvent implements [mcphttp.Cluster]. Only the GET stream ("g") is
// numbered here; the replica running a POST stream numbers its events.
func (c *Cluster) AppendEvent(ctx context.Context, key, stream string, seq int, data []byte, final bool) (int, error) {
	f := "0"
	if final {
		f = "1"
	}
	auto := "0"
	if seq == 0 && stream == "g" {
		auto = "1"
	}
	n, err := appendScript.Run(ctx, c.rdb,
		[]string{c.streamKey(key, stream), c.streamSet(key)},
		seq, data, f, c.opts.MaxEvents, c.opts.EventTTL.Milliseconds(), c.streamChan(key, stream), stream, auto).Int()
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Head implements [mcphttp.Cluster].
func (c *Cluster) Head(ctx context.Context, key, stream string) ([]byte, bool, error) {
	msgs, err := c.rdb.XRangeN(ctx, c.streamKey(key, stream), "1-0", "1-0", 1).Result()
	if err != nil {
		return nil, false, err
	}
	if len(msgs) == 0 {
		// Trimmed away, or never stored: the stream exists if any of
		// its events does.
		n, err := c.rdb.XLen(ctx, c.streamKey(key, stream)).Result()
		return nil, n > 0, err
	}
	d, _ := msgs[0].Values["d"].(string)
	return []byte(d), true, nil
}

// LastSeq implements [mcphttp.Cluster].
func (c *Cluster) LastSeq(ctx context.Context, key, stream string) (int, error) {
	msgs, err := c.rdb.XRevRangeN(ctx, c.streamKey(key, stream), "+", "-", 1).Result()
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	return entrySeq(msgs[0].ID), nil
}

func entrySeq(id string) int {
	_, n, _ := strings.Cut(id, "-")
	v, _ := strconv.Atoi(n)
	return v
}

// Replay implements [mcphttp.Cluster].
func (c *Cluster) Replay(ctx context.Context, key, stream string, after int, fn func(seq int, data []byte, final bool) error) error {
	_, err := c.replay(ctx, key, stream, after, fn)
	return err
}

// replay delivers the stored events after seq and returns the last one
// delivered (after if none) and whether it was final.
func (c *Cluster) replay(ctx context.Context, key, stream string, after int, fn func(seq int, data []byte, final bool) error) (replayed, error) {
	r := replayed{last: after}
	msgs, err := c.rdb.XRange(ctx, c.streamKey(key, stream), "(1-"+strconv.Itoa(max(after, 0)), "+").Result()
	if err != nil {
		return r, err
	}
	if len(msgs) > 0 && after > 0 && entrySeq(msgs[0].ID) > after+1 {
		return r, mcphttp.ErrEventsGone
	}
	for _, m := range msgs {
		seq := entrySeq(m.ID)
		d, _ := m.Values["d"].(string)
		f, _ := m.Values["f"].(string)
		r.last, r.final = seq, f == "1"
		if err := fn(seq, []byte(d), r.final); err != nil {
			return r, err
		}
		if r.final {
			return r, nil
		}
	}
	return r, nil
}

type replayed struct {
	last  int
	final bool
}

// Follow implements [mcphttp.Cluster]: it subscribes to the stream's
// channel and waits for Redis to confirm before it reads the stored
// events, so that an event appended in between is in one or the other;
// the numbers drop what is in both.
func (c *Cluster) Follow(ctx context.Context, key, stream string, after int, fn func(seq int, data []byte, final bool) error) error {
	sub, err := c.bus.subscribe(ctx, c.streamChan(key, stream))
	if err != nil {
		return err
	}
	defer c.bus.unsubscribe(sub)
	r, err := c.replay(ctx, key, stream, after, fn)
	if err != nil || r.final {
		return err
	}
	last := r.last
	catchUp := func() (bool, error) {
		r, err := c.replay(ctx, key, stream, last, fn)
		last = r.last
		return r.final, err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-sub.gap:
			// Messages were dropped (a slow reader, a reconnection):
			// the stored events tell what they said.
			if final, err := catchUp(); err != nil || final {
				return err
			}
		case p := <-sub.c:
			seqs, rest, _ := strings.Cut(p, "|")
			fs, data, _ := strings.Cut(rest, "|")
			seq, err := strconv.Atoi(seqs)
			if err != nil || seq <= last {
				continue
			}
			if seq > last+1 {
				if final, err := catchUp(); err != nil || final {
					return err
				}
				continue
			}
			last = seq
			if err := fn(seq, []byte(data), fs == "1"); err != nil || fs == "1" {
				return err
			}
		}
	}
}

// ForgetEvents implements [mcphttp.Cluster].
func (c *Cluster) ForgetEvents(ctx context.Context, key string) error {
	names, err := c.rdb.SMembers(ctx, c.streamSet(key)).Result()
	if err != nil {
		return err
	}
	keys := []string{c.streamSet(key)}
	for _, n := range names {
		keys = append(keys, c.streamKey(key, n))
	}
	return c.rdb.Del(ctx, keys...).Err()
}

// claimScript gives the stream to ARGV[1] if nobody holds it, it holds it
// already, or its holder's replica (the tag before the colon) is no longer
// alive.
var claimScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] or redis.call('EXISTS', ARGV[3] .. string.match(cur, '^([^:]*)')) == 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`)

var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

func (c *Cluster) holderKey(key, stream string) string { return c.Key("hold:" + key + "|" + stream) }

// ClaimStream implements [mcphttp.Cluster].
func (c *Cluster) ClaimStream(ctx context.Context, key, stream, holder string, ttl time.Duration) (bool, error) {
	n, err := claimScript.Run(ctx, c.rdb, []string{c.holderKey(key, stream)}, holder, ttl.Milliseconds(), c.Key("alive:")).Int()
	return n == 1, err
}

// ReleaseStream implements [mcphttp.Cluster].
func (c *Cluster) ReleaseStream(ctx context.Context, key, stream, holder string) error {
	return releaseScript.Run(ctx, c.rdb, []string{c.holderKey(key, stream)}, holder).Err()
}

var errClosed = errors.New("cluster: closed")

// claimNameScript gives name to ARGV[1] (a replica's tag) unless a running
// replica has it already, and returns who has it.
var claimNameScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == false or (cur ~= ARGV[1] and redis.call('EXISTS', ARGV[3] .. cur) == 0) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ARGV[1]
end
return cur
`)

// Claim makes this replica the one that serves name (a session's process
// of some server, say) for ttl, unless a running replica does already; it
// returns the tag of the replica that does.
func (c *Cluster) Claim(ctx context.Context, name string, ttl time.Duration) (string, error) {
	return claimNameScript.Run(ctx, c.rdb, []string{c.Key("claim:" + name)}, c.tag, ttl.Milliseconds(), c.Key("alive:")).Text()
}
