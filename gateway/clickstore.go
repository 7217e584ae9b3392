package gateway

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/cluster"
	"github.com/mcpgate/mcpgate/gateway/pins"
	"github.com/mcpgate/mcpgate/internal/postgres"
	"github.com/mcpgate/mcpgate/internal/redact"
	"github.com/mcpgate/mcpgate/internal/sqlitefile"
	"github.com/mcpgate/mcpgate/toolsearch"
)

// The click store: what search learns from use (clicks.go), kept in the
// state database, so that a restart remembers it and replicas sharing a
// Postgres state database learn together.
//
// Each click is a row of search_clicks, a table of its own beside the
// pins: tenant, query, tool, when, and which gateway wrote it. One
// goroutine writes them, in a batch each clickPollInterval (never on a
// caller's path: a search or a call never waits for the database). At
// its first use of learning a gateway replays the rows younger than the
// model's horizon, the newest maxStoredClicks; then, each interval, the
// rows that other gateways wrote since. Row ids rise in the order rows
// are committed (SQLite has one writer at a time; on Postgres writers
// take an advisory lock), so a cursor of the last id read misses none.
// ResetLearning deletes the tenant's rows and writes one without a tool,
// which tells the other replicas to forget the tenant too. Rows older
// than the horizon, and all but the newest maxStoredClicks, are pruned.
//
// The database helps, it is not needed: while it cannot be opened,
// written or read, learning goes on in memory, and each kind of failure
// is logged once, and once more when it is over. Queries may hold
// secrets: the log says how many clicks, never what was searched.

const (
	// clickPollInterval is how often a gateway writes its clicks and
	// reads the other replicas'.
	clickPollInterval = 5 * time.Second
	// clickPruneInterval is how often old rows are deleted: the table
	// grows by at most this long's clicks past its bound.
	clickPruneInterval = 10 * time.Minute
	// maxStoredClicks bounds the rows kept, and so those replayed.
	maxStoredClicks = 100_000
	// maxPendingClicks bounds the clicks waiting to be written while the
	// database does not take them; past it the oldest are not stored.
	maxPendingClicks = 10_000
	// clickBatch is how many rows one transaction writes or one query
	// reads.
	clickBatch = 1000
	// clickDBWait bounds one round's work on the database (a bound on a
	// hang, not a schedule).
	clickDBWait = 30 * time.Second
)

// The failures of the click store, each logged once until it is over.
const (
	clickOpenFailed  = "open"
	clickWriteFailed = "write"
	clickReadFailed  = "read"
	clickPruneFailed = "prune"
	clickQueueFull   = "queue"
)

var clickFailureMessages = map[string]string{
	clickOpenFailed:  "gateway: cannot open the state database for learning from use; learning goes on in memory",
	clickWriteFailed: "gateway: cannot store clicks in the state database; learning goes on in memory, and they are stored once it answers",
	clickReadFailed:  "gateway: cannot read clicks from the state database; learning goes on without other replicas' until it answers",
	clickPruneFailed: "gateway: cannot delete old clicks from the state database",
	clickQueueFull:   "gateway: too many clicks wait for the state database; the oldest will not be stored",
}

const sqliteClickSchema = `CREATE TABLE IF NOT EXISTS search_clicks (
	id INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: cursors stay valid
	tenant TEXT NOT NULL,
	query TEXT NOT NULL,
	tool TEXT NOT NULL, -- '': the tenant's clicks were reset
	at_ms INTEGER NOT NULL,
	replica TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS search_clicks_at ON search_clicks (at_ms);
CREATE INDEX IF NOT EXISTS search_clicks_tenant ON search_clicks (tenant);`

// postgresClickMigrations are the table in Postgres (see
// postgres.Migrate). Append only.
var postgresClickMigrations = []string{
	`CREATE TABLE search_clicks (
		id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		tenant  text NOT NULL,
		query   text NOT NULL,
		tool    text NOT NULL,
		at_ms   bigint NOT NULL,
		replica text NOT NULL
	);
	CREATE INDEX search_clicks_at ON search_clicks (at_ms);
	CREATE INDEX search_clicks_tenant ON search_clicks (tenant);`,
}

// clickRow is a click, or a reset of a tenant's (tool "").
type clickRow struct {
	seq                 uint64 // its place in pending
	tenant, query, tool string
	at                  time.Time
}

// clickStore keeps a gateway's clicks in the state database.
type clickStore struct {
	path    string // a SQLite file or a Postgres URL
	replica string // this gateway's name in the rows it writes
	logger  *slog.Logger
	learns  func() bool
	now     func() time.Time // the clicks' clock
	// poll is how often the store writes and reads; zero means
	// clickPollInterval. keep bounds the rows; zero means
	// maxStoredClicks. Tests shorten them before the store starts.
	poll time.Duration
	keep int

	mu      sync.Mutex
	pending []clickRow // to be written, oldest first
	seq     uint64     // the last row's seq
	dropped int        // clicks not stored since the queue filled
	failing map[string]bool
	cancel  context.CancelFunc // nil until started
	closed  bool
	done    chan struct{} // closed when run returns

	// loaded is set once the stored clicks are replayed; rounds counts
	// the rounds run. Tests read them.
	loaded atomic.Bool
	rounds atomic.Int64

	// Only run's goroutine uses these (and close, once run is over).
	db        *sql.DB
	postgres  bool
	cursor    int64 // the last row id read
	lastPrune time.Time
}

// newClickStore is the click store of g's state database, or nil when
// the state is kept in memory.
func (g *Gateway) newClickStore(c *cluster.Cluster, given string) *clickStore {
	path := clickStatePath(g.cfg.State.DB, given, g.pins)
	if path == "" {
		return nil
	}
	replica := cluster.DefaultReplicaID()
	if c != nil {
		replica = c.ReplicaID()
	}
	// Two gateways of one process (or a replica id given twice) must
	// still tell their rows apart.
	replica += "/" + rand.Text()[:10]
	return &clickStore{path: path, replica: replica, logger: g.logger, learns: g.learns, now: g.clicks.clock, failing: map[string]bool{}}
}

// clickStatePath is the state database: the configuration's, else the
// one the caller says it opened the pins from (Options.StateDB), else
// the pins store's own path where it shows in full: a Postgres URL's
// password is hidden in it, and then clicks stay in memory.
func clickStatePath(configured, given string, ps *pins.Store) string {
	switch {
	case configured != "":
		return configured
	case given != "":
		return given
	case ps == nil:
		return ""
	}
	p := ps.Path()
	if postgres.IsURL(p) && strings.Contains(p, redact.Marker) {
		return ""
	}
	return p
}

func (s *clickStore) interval() time.Duration {
	if s.poll > 0 {
		return s.poll
	}
	return clickPollInterval
}

func (s *clickStore) limit() int {
	if s.keep > 0 {
		return s.keep
	}
	return maxStoredClicks
}

// start starts the store's goroutine, which feeds model, unless it is
// started or closed.
func (s *clickStore) start(model *toolsearch.Clicks) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go s.run(ctx, model)
}

// close stops the goroutine, which writes what is pending first, and
// closes the database.
func (s *clickStore) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
	if s.db != nil {
		s.db.Close()
		s.db = nil
	}
}

// add queues a click, or a reset of tenant's clicks (tool ""), for the
// next write.
func (s *clickStore) add(tenant, query, tool string, at time.Time) {
	if s == nil {
		return
	}
	// Postgres refuses text that is not UTF-8 or holds NUL, and would
	// refuse the whole batch with it; such names match nothing stored.
	if !storableText(tenant) || !storableText(tool) {
		return
	}
	query = strings.ReplaceAll(strings.ToValidUTF8(query, ""), "\x00", "")
	// A query is kept for weeks: a token someone pasted into a search is
	// not (redact's rules, as for the audit log; "[redacted]" matches no
	// tool).
	query = redact.String(query)
	s.mu.Lock()
	defer s.mu.Unlock()
	if tool == "" {
		// The tenant's clicks waiting are forgotten with the rest, and
		// a reset waiting says it already.
		kept := s.pending[:0]
		for _, r := range s.pending {
			if r.tenant != tenant {
				kept = append(kept, r)
			}
		}
		clear(s.pending[len(kept):])
		s.pending = kept
	} else if len(s.pending) >= maxPendingClicks {
		for i, r := range s.pending {
			if r.tool != "" {
				s.pending = append(s.pending[:i], s.pending[i+1:]...)
				break
			}
		}
		if s.dropped++; !s.failing[clickQueueFull] {
			s.failing[clickQueueFull] = true
			s.logger.Warn(clickFailureMessages[clickQueueFull], "pending", maxPendingClicks)
		}
	}
	s.seq++
	s.pending = append(s.pending, clickRow{seq: s.seq, tenant: tenant, query: query, tool: tool, at: at})
}

func storableText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// run opens the database, replays its clicks into model, then each
// interval writes the clicks made here and replays those made elsewhere,
// while learning is on.
func (s *clickStore) run(ctx context.Context, model *toolsearch.Clicks) {
	defer close(s.done)
	tick := time.NewTicker(s.interval())
	defer tick.Stop()
	for {
		if s.learns() {
			s.round(ctx, model)
		}
		s.rounds.Add(1)
		select {
		case <-ctx.Done():
			if s.learns() {
				s.flush()
			}
			return
		case <-tick.C:
		}
	}
}

// flush writes what is pending as the gateway closes, so that the
// next start replays it: even if the stored clicks were never replayed
// here (a close in the first round), as this model is done with.
func (s *clickStore) flush() {
	s.mu.Lock()
	n := len(s.pending)
	s.mu.Unlock()
	if n == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), clickDBWait)
	defer cancel()
	if s.db != nil || s.open(ctx) {
		s.write(ctx)
	}
}

// round is one interval's work. Nothing is written before the stored
// clicks are replayed: the replay would count this gateway's twice.
func (s *clickStore) round(ctx context.Context, model *toolsearch.Clicks) {
	ctx, cancel := context.WithTimeout(ctx, clickDBWait)
	defer cancel()
	if s.db == nil && !s.open(ctx) {
		return
	}
	if !s.loaded.Load() {
		if !s.load(ctx, model) {
			return
		}
		s.loaded.Store(true)
	}
	s.write(ctx)
	s.readOthers(ctx, model)
	if time.Since(s.lastPrune) >= clickPruneInterval {
		s.prune(ctx, model.Horizon())
	}
}

// open opens the database and makes the table if it is absent.
func (s *clickStore) open(ctx context.Context) bool {
	var db *sql.DB
	var err error
	if postgres.IsURL(s.path) {
		if db, err = postgres.Open(ctx, s.path); err == nil {
			err = postgres.Migrate(ctx, db, "search_clicks_migrations", "the click store", postgresClickMigrations)
		}
	} else if db, _, err = sqlitefile.Open(s.path, nil); err == nil {
		_, err = db.ExecContext(ctx, sqliteClickSchema)
	}
	if db != nil {
		db.SetMaxOpenConns(1) // one goroutine uses it
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		s.failed(clickOpenFailed, err)
		return false
	}
	s.recovered(clickOpenFailed)
	s.db, s.postgres = db, postgres.IsURL(s.path)
	return true
}

// load replays the stored clicks that still count, the newest first, and
// sets the cursor past them.
func (s *clickStore) load(ctx context.Context, model *toolsearch.Clicks) bool {
	var top int64
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM search_clicks`).Scan(&top)
	if err == nil {
		since := s.now().Add(-model.Horizon()).UnixMilli()
		reset := s.pendingResets()
		var rows *sql.Rows
		rows, err = s.db.QueryContext(ctx, `SELECT tenant, query, tool, at_ms FROM search_clicks
			WHERE id <= $1 AND at_ms >= $2 AND tool <> '' ORDER BY id DESC LIMIT $3`, top, since, s.limit())
		if err == nil {
			err = eachClick(rows, false, func(_ int64, tenant, query, tool string, at time.Time) {
				if !reset.covers(tenant, at) {
					model.RecordAt(tenant, query, tool, at)
				}
			})
		}
	}
	if err != nil {
		s.failed(clickReadFailed, err)
		return false
	}
	s.recovered(clickReadFailed)
	s.cursor = top
	return true
}

// readOthers replays what other gateways wrote since the cursor.
func (s *clickStore) readOthers(ctx context.Context, model *toolsearch.Clicks) {
	reset := s.pendingResets()
	for {
		rows, err := s.db.QueryContext(ctx, `SELECT id, tenant, query, tool, at_ms FROM search_clicks
			WHERE id > $1 AND replica <> $2 ORDER BY id LIMIT $3`, s.cursor, s.replica, clickBatch)
		n := 0
		if err == nil {
			err = eachClick(rows, true, func(id int64, tenant, query, tool string, at time.Time) {
				n++
				s.cursor = id
				switch {
				case tool == "":
					model.Reset(tenant)
				case !reset.covers(tenant, at):
					model.RecordAt(tenant, query, tool, at)
				}
			})
		}
		if err != nil {
			s.failed(clickReadFailed, err)
			return
		}
		s.recovered(clickReadFailed)
		if n < clickBatch {
			return
		}
	}
}

// resets are the resets waiting to be written: tenant → when.
type resets map[string]time.Time

// pendingResets are the resets waiting to be written. Stored clicks
// that one covers are forgotten here already, and about to be deleted.
func (s *clickStore) pendingResets() resets {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out resets
	for _, r := range s.pending {
		if r.tool == "" {
			if out == nil {
				out = resets{}
			}
			out[r.tenant] = r.at
		}
	}
	return out
}

// covers reports whether a click of tenant at at was reset.
func (rs resets) covers(tenant string, at time.Time) bool {
	t, ok := rs[tenant]
	return ok && !at.After(t)
}

// eachClick calls fn with each row of rows (id if withID, then tenant,
// query, tool and at_ms), and closes rows.
func eachClick(rows *sql.Rows, withID bool, fn func(id int64, tenant, query, tool string, at time.Time)) error {
	defer rows.Close()
	for rows.Next() {
		var id, at int64
		var tenant, query, tool string
		dest := []any{&tenant, &query, &tool, &at}
		if withID {
			dest = append([]any{&id}, dest...)
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if len(query) > maxClickQuery {
			query = query[:maxClickQuery] // the store is trusted, not its size
		}
		fn(id, tenant, query, tool, time.UnixMilli(at))
	}
	return rows.Err()
}

// write writes what is pending, a batch per transaction, and keeps what
// it could not write for the next round.
func (s *clickStore) write(ctx context.Context) {
	for {
		s.mu.Lock()
		batch := append([]clickRow(nil), s.pending[:min(len(s.pending), clickBatch)]...)
		s.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		if err := s.writeBatch(ctx, batch); err != nil {
			s.mu.Lock()
			n := len(s.pending)
			s.mu.Unlock()
			s.failed(clickWriteFailed, err, "pending", n)
			return
		}
		s.mu.Lock()
		last := batch[len(batch)-1].seq
		i := 0
		for i < len(s.pending) && s.pending[i].seq <= last {
			i++
		}
		s.pending = append(s.pending[:0], s.pending[i:]...)
		dropped := s.dropped
		if len(s.pending) < maxPendingClicks/2 && s.failing[clickQueueFull] {
			s.failing[clickQueueFull] = false
			s.dropped = 0
			s.logger.Info("gateway: the clicks waiting for the state database are stored again", "not stored", dropped)
		}
		s.mu.Unlock()
		s.recovered(clickWriteFailed)
	}
}

func (s *clickStore) writeBatch(ctx context.Context, batch []clickRow) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.postgres {
		// Ids must be committed in their order, or a reader's cursor
		// could pass one committed late.
		if err := postgres.Lock(ctx, tx, "mcpgate.search_clicks.write"); err != nil {
			return err
		}
	}
	insert, err := tx.PrepareContext(ctx, `INSERT INTO search_clicks (tenant, query, tool, at_ms, replica) VALUES ($1, $2, $3, $4, $5)`)
	if err != nil {
		return err
	}
	defer insert.Close()
	for _, r := range batch {
		if r.tool == "" {
			if _, err := tx.ExecContext(ctx, `DELETE FROM search_clicks WHERE tenant = $1`, r.tenant); err != nil {
				return err
			}
		}
		if _, err := insert.ExecContext(ctx, r.tenant, r.query, r.tool, r.at.UnixMilli(), s.replica); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// prune deletes the rows older than horizon, and all but the newest
// limit.
func (s *clickStore) prune(ctx context.Context, horizon time.Duration) {
	_, err := s.db.ExecContext(ctx, `DELETE FROM search_clicks WHERE at_ms < $1`, s.now().Add(-horizon).UnixMilli())
	if err == nil {
		_, err = s.db.ExecContext(ctx, `DELETE FROM search_clicks WHERE id <=
			(SELECT id FROM search_clicks ORDER BY id DESC LIMIT 1 OFFSET $1)`, s.limit())
	}
	if err != nil {
		s.failed(clickPruneFailed, err)
		return
	}
	s.recovered(clickPruneFailed)
	s.lastPrune = time.Now()
}

// failed logs a failure of kind unless it is already failing.
func (s *clickStore) failed(kind string, err error, attrs ...any) {
	if errors.Is(err, context.Canceled) {
		return // closing
	}
	s.mu.Lock()
	logged := s.failing[kind]
	s.failing[kind] = true
	s.mu.Unlock()
	if !logged {
		s.logger.Warn(clickFailureMessages[kind], append(attrs, "error", &postgres.Error{Err: err})...)
	}
}

// recovered logs that a failure of kind is over, if it was on.
func (s *clickStore) recovered(kind string) {
	s.mu.Lock()
	was := s.failing[kind]
	s.failing[kind] = false
	s.mu.Unlock()
	if was {
		s.logger.Info("gateway: the state database works again for learning from use", "failure", kind)
	}
}
