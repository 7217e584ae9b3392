package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/mcphttp"
)

// The session registry: one JSON value per session, expiring when unused
// for the handler's idle timeout.

func (c *Cluster) sessionKey(id string) string { return c.Key("session:" + id) }

// SaveSession implements [mcphttp.Cluster].
func (c *Cluster) SaveSession(ctx context.Context, rec *mcphttp.SessionRecord, ttl time.Duration) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return c.rdb.Set(ctx, c.sessionKey(rec.ID), b, ttl).Err()
}

// LoadSession implements [mcphttp.Cluster].
func (c *Cluster) LoadSession(ctx context.Context, id string) (*mcphttp.SessionRecord, error) {
	b, err := c.rdb.Get(ctx, c.sessionKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec mcphttp.SessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		// Not ours to serve: a record this version cannot read is an
		// unknown session, never a half-restored one.
		c.logger.Warn("cluster: unreadable session record", "error", err)
		return nil, nil
	}
	return &rec, nil
}

// TouchSession implements [mcphttp.Cluster].
func (c *Cluster) TouchSession(ctx context.Context, id string, ttl time.Duration) error {
	return c.rdb.PExpire(ctx, c.sessionKey(id), ttl).Err()
}

// DeleteSession implements [mcphttp.Cluster].
func (c *Cluster) DeleteSession(ctx context.Context, id string) error {
	return c.rdb.Del(ctx, c.sessionKey(id)).Err()
}

// SessionCount returns how many sessions the registry holds, for tests
// and figures.
func (c *Cluster) SessionCount(ctx context.Context) (int, error) {
	n := 0
	iter := c.rdb.Scan(ctx, 0, c.Key("session:*"), 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	return n, iter.Err()
}
