package cluster

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/mcphttp"
)

// Options configure [Open]. The zero value needs only a URL.
type Options struct {
	// URL is the Redis server: redis://[user:password@]host:port/db, or
	// rediss:// for TLS.
	URL string
	// ReplicaID names this replica in logs and metrics. Default: the
	// host name and the process id, "host-1234".
	ReplicaID string
	// Prefix starts every key and channel, so that several deployments
	// can share one Redis. Default "mcpgate:".
	Prefix string
	// Logger receives the cluster's diagnostics. Default slog.Default().
	Logger *slog.Logger
	// MaxEvents bounds the events kept per SSE stream for resumption;
	// the oldest go first. Default 1000.
	MaxEvents int
	// EventTTL drops an SSE stream's events when it has had none for
	// this long. Default 30 minutes, the session idle timeout's default.
	EventTTL time.Duration
}

// Cluster is one replica's connection to the state it shares with the
// other replicas.
type Cluster struct {
	rdb    *redis.Client
	opts   Options
	tag    string // short, unique per process: routes messages to it
	logger *slog.Logger
	bus    *bus
	stop   chan struct{}
	once   sync.Once

	stateKey []byte

	down    atomic.Bool // the last heartbeat failed
	beat    atomic.Bool // a heartbeat has reached Redis: the epoch key is there
	mu      sync.Mutex
	recover func() // OnRecover's, under mu
}

// Open connects to Redis and checks that it answers: an unreachable
// Redis at start is an error naming it, never a replica that serves
// without the state it was told to share.
func Open(ctx context.Context, opts Options) (*Cluster, error) {
	ro, err := redis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("cluster: the Redis URL %q: %w (want redis://host:port/db)", redactURL(opts.URL), err)
	}
	if opts.ReplicaID == "" {
		opts.ReplicaID = DefaultReplicaID()
	}
	if opts.Prefix == "" {
		opts.Prefix = "mcpgate:"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = 1000
	}
	if opts.EventTTL <= 0 {
		opts.EventTTL = 30 * time.Minute
	}
	// Every operation is bounded by its context, also against a Redis
	// that accepts connections and never answers.
	ro.ContextTimeoutEnabled = true
	redis.SetLogger(slogPrinter{opts.Logger})
	rdb := redis.NewClient(ro)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("cluster: Redis at %s does not answer: %w", ro.Addr, err)
	}
	c := &Cluster{rdb: rdb, opts: opts, tag: newTag(), logger: opts.Logger.With("replica", opts.ReplicaID), stop: make(chan struct{})}
	if c.stateKey, err = c.loadStateKey(pctx); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("cluster: reading the shared state key from Redis at %s: %w", ro.Addr, err)
	}
	c.renewAlive()
	c.bus = newBus(c)
	go c.heartbeat()
	return c, nil
}

// loadStateKey reads the key every replica signs request states with,
// made by the first replica that asks.
func (c *Cluster) loadStateKey(ctx context.Context) ([]byte, error) {
	k := make([]byte, 32)
	rand.Read(k)
	if err := c.rdb.SetNX(ctx, c.Key("statekey"), k, 0).Err(); err != nil {
		return nil, err
	}
	return c.rdb.Get(ctx, c.Key("statekey")).Bytes()
}

// StateKey implements [mcphttp.Cluster].
func (c *Cluster) StateKey() []byte { return c.stateKey }

// ReplicaID names this replica (Options.ReplicaID).
func (c *Cluster) ReplicaID() string { return c.opts.ReplicaID }

// Tag is this process's short unique name, which other replicas use to
// address it; a restarted replica has a new one.
func (c *Cluster) Tag() string { return c.tag }

// Redis is the client, for the integrations built on this connection
// (rate limits, stores).
func (c *Cluster) Redis() *redis.Client { return c.rdb }

// Key is name under the cluster's prefix.
func (c *Cluster) Key(name string) string { return c.opts.Prefix + name }

// Logger is the cluster's logger, which names the replica.
func (c *Cluster) Logger() *slog.Logger { return c.logger }

// Close tells the other replicas this one has stopped and ends the
// connection. Call it after the HTTP handler's Shutdown.
func (c *Cluster) Close() error {
	c.once.Do(func() {
		close(c.stop)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c.rdb.Del(ctx, c.Key("alive:"+c.tag))
		c.bus.ps.Close()
	})
	return c.rdb.Close()
}

// DefaultReplicaID is the host name and the process id.
func DefaultReplicaID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "mcpgate"
	}
	return host + "-" + strconv.Itoa(os.Getpid())
}

var tagEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newTag returns 40 random bits as 8 lower-case characters.
func newTag() string {
	var b [5]byte
	rand.Read(b[:])
	return tagEncoding.EncodeToString(b[:])
}

// redactURL hides a password in a Redis URL, for error messages.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return u
	}
	return scheme + "://***@" + rest[at+1:]
}

// ErrUnavailable is the error of shared-state operations while Redis
// cannot be reached.
var ErrUnavailable = errors.New("cluster: the shared store (Redis) is unavailable")

// The Cluster is what mcphttp shares sessions through.
var _ mcphttp.Cluster = (*Cluster)(nil)

// slogPrinter routes go-redis's own diagnostics (a failed dial, say) to
// the replica's logger on stderr, at the debug level: the cluster logs
// the outages they belong to itself, once each.
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Printf(ctx context.Context, format string, v ...any) {
	p.l.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}
