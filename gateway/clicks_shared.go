package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/cluster"
)

// Behind a load balancer a caller's search and the call it leads to
// reach different replicas more often than not (two times in three with
// three replicas), and a replica knows only the searches it served. So
// with replicas sharing a Redis (Options.Cluster), what each search
// showed is kept there too, per caller, as a replica keeps it in memory:
// the caller's last searchesPerCaller searches for clickWindow. A
// successful call then looks there for the search it was chosen from,
// and a set per search credits each tool once, whichever replicas the
// search and its calls reached.
//
// The search's replica writes before it answers, and tells every replica
// over pub/sub that the caller searched (a hash of the caller, nothing
// of the search). A call costs Redis nothing unless its caller searched
// in the window: then it looks in the background (one goroutine, a
// bounded queue), so that a call never waits for Redis on account of
// learning. While Redis fails, clicks fall back to what the replica
// itself saw.

// sharedClickQueue bounds the calls waiting to be looked up; beyond it
// clicks are dropped (and counted), never calls delayed.
const sharedClickQueue = 1024

// sharedSearchTimeout bounds a search's write to Redis: learning is not
// worth a slow search.
const sharedSearchTimeout = 250 * time.Millisecond

// sharedSearches keeps shown searches in the cluster's Redis.
type sharedSearches struct {
	c       *cluster.Cluster
	jobs    chan sharedClick
	dropped atomic.Int64 // clicks not looked up: the queue was full
	failed  atomic.Bool  // Redis failed last time (logged once a streak)

	mu        sync.Mutex
	searchers map[string]time.Time // caller hash → when a replica said they searched
}

// sharedClick is a successful call to look up.
type sharedClick struct {
	caller, tool string
	at           time.Time
}

// storedSearch is a shownSearch as Redis keeps it.
type storedSearch struct {
	ID     string   `json:"id"`
	Tenant string   `json:"tenant"`
	Query  string   `json:"query"`
	Tools  []string `json:"tools"`
	At     int64    `json:"at"` // Unix milliseconds
}

func newSharedSearches(c *cluster.Cluster) *sharedSearches {
	if c == nil {
		return nil
	}
	return &sharedSearches{c: c, jobs: make(chan sharedClick, sharedClickQueue)}
}

// callerHash stands for a caller in Redis: a caller key holds a
// principal's name, and neither the keys nor the messages need it.
func callerHash(caller string) string {
	sum := sha256.Sum256([]byte(caller))
	return hex.EncodeToString(sum[:16])
}

// key is where caller's searches are kept.
func (s *sharedSearches) key(caller string) string { return s.c.Key("clk:" + callerHash(caller)) }

// channel is where replicas say that a caller searched.
func (s *sharedSearches) channel() string { return s.c.Key("clk") }

// noteSearcher remembers that the caller of hash searched at now, within
// maxCallers: past it, those outside the window go, then any down to
// half.
func (s *sharedSearches) noteSearcher(hash string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.searchers == nil {
		s.searchers = map[string]time.Time{}
	}
	if _, ok := s.searchers[hash]; !ok && len(s.searchers) >= maxCallers {
		for h, at := range s.searchers {
			if now.Sub(at) > clickWindow {
				delete(s.searchers, h)
			}
		}
		for h := range s.searchers {
			if len(s.searchers) <= maxCallers/2 {
				break
			}
			delete(s.searchers, h)
		}
	}
	s.searchers[hash] = now
}

// searchedRecently says whether a replica said within the window that
// caller searched.
func (s *sharedSearches) searchedRecently(caller string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.searchers[callerHash(caller)]
	return ok && now.Sub(at) <= clickWindow
}

// creditKey is the set of the tools already credited to a search.
func (s *sharedSearches) creditKey(id string) string { return s.c.Key("clkc:" + id) }

// remember keeps ss as caller's latest search.
func (s *sharedSearches) remember(ctx context.Context, caller string, ss *shownSearch) error {
	b, err := json.Marshal(storedSearch{ID: rand.Text(), Tenant: ss.tenant, Query: ss.query, Tools: ss.tools, At: ss.at.UnixMilli()})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, sharedSearchTimeout)
	defer cancel()
	k := s.key(caller)
	pipe := s.c.Redis().TxPipeline()
	pipe.LPush(ctx, k, b)
	pipe.LTrim(ctx, k, 0, searchesPerCaller-1)
	pipe.PExpire(ctx, k, clickWindow)
	pipe.Publish(ctx, s.channel(), callerHash(caller))
	_, err = pipe.Exec(ctx)
	return err
}

// chosen returns caller's latest search within the window that showed
// tool and had not yet been credited with it, and credits it; nil if
// there is none.
func (s *sharedSearches) chosen(ctx context.Context, caller, tool string, now time.Time) (*storedSearch, error) {
	rdb := s.c.Redis()
	list, err := rdb.LRange(ctx, s.key(caller), 0, searchesPerCaller-1).Result()
	if err != nil {
		return nil, err
	}
	for _, item := range list { // newest first
		var ss storedSearch
		if json.Unmarshal([]byte(item), &ss) != nil || ss.ID == "" {
			continue
		}
		if now.Sub(time.UnixMilli(ss.At)) > clickWindow || !slices.Contains(ss.Tools, tool) {
			continue
		}
		pipe := rdb.TxPipeline()
		added := pipe.SAdd(ctx, s.creditKey(ss.ID), tool)
		pipe.PExpire(ctx, s.creditKey(ss.ID), clickWindow)
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, err
		}
		if added.Val() == 1 {
			return &ss, nil
		}
	}
	return nil, nil
}

// runSharedClicks hears which callers searched and looks up the queued
// calls, until ctx ends.
func (g *Gateway) runSharedClicks(ctx context.Context) {
	s := g.clicks.shared
	sub := s.c.Redis().Subscribe(ctx, s.channel())
	defer sub.Close()
	heard := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-heard:
			if !ok {
				return
			}
			s.noteSearcher(m.Payload, g.clicks.clock())
		case job := <-s.jobs:
			g.creditShared(ctx, job)
		}
	}
}

// creditShared records the click job makes, if a search anywhere showed
// its tool; while Redis fails, it asks the replica's own searches.
func (g *Gateway) creditShared(ctx context.Context, job sharedClick) {
	s := g.clicks.shared
	lctx, cancel := context.WithTimeout(ctx, sharedSearchTimeout)
	ss, err := s.chosen(lctx, job.caller, job.tool, job.at)
	cancel()
	if err != nil {
		s.fail(g, err)
		g.creditLocal(job.caller, job.tool, job.at)
		return
	}
	s.ok(g)
	if ss != nil && g.learns() {
		g.clickModel().RecordAt(ss.Tenant, ss.Query, job.tool, job.at)
		g.clicks.store.add(ss.Tenant, ss.Query, job.tool, job.at)
	}
}

// fail logs the first failure of a streak, never a query.
func (s *sharedSearches) fail(g *Gateway, err error) {
	if !s.failed.Swap(true) {
		g.logger.Warn("tool search learning: Redis failed; clicks count only where search and call reach the same replica until it recovers", "error", err)
	}
}

func (s *sharedSearches) ok(g *Gateway) {
	if s.failed.Swap(false) {
		g.logger.Info("tool search learning: Redis is back; clicks count across replicas again")
	}
}
