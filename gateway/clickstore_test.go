package gateway

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgate/mcpgate/gateway/pins"
	"github.com/mcpgate/mcpgate/internal/testservice"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/toolsearch"
)

// testClickPoll is the click stores' interval in these tests: short, so
// that the bounds on hangs are never near.
const testClickPoll = 20 * time.Millisecond

// learner is a gateway like learningGateway's, its state database at
// state: alice, carol and dave act for acme, bob for globex.
type learner struct {
	g    *Gateway
	logs *logBuffer
	// stop closes the clients and the gateway, which writes the clicks
	// pending; the test's cleanup calls it too.
	stop func()

	mu      sync.Mutex
	clients []*mcp.ClientSession
	srv     string
}

func startLearner(t *testing.T, state string, learn *bool) *learner {
	t.Helper()
	cfg := learningConfig(t, learn)
	cfg.State.DB = state
	l := &learner{logs: &logBuffer{}}
	g, err := New(cfg, &Options{Logger: l.logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	if g.clicks.store == nil {
		t.Fatalf("state.db %q: no click store", state)
	}
	g.clicks.store.poll = testClickPoll // before anything runs
	l.g = g
	ctx, cancel := context.WithCancel(context.Background())
	g.Start(ctx)
	l.stop = sync.OnceFunc(func() {
		l.mu.Lock()
		for _, cs := range l.clients {
			cs.Close()
		}
		l.mu.Unlock()
		cancel()
		g.Close()
	})
	t.Cleanup(l.stop)
	waitState(t, g, StateReady)
	l.srv = serveTenants(t, g).URL
	return l
}

func (l *learner) connect(t *testing.T, user string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(nil, nil).Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: l.srv + "/mcp", Header: map[string][]string{"X-User": {user}}})
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.clients = append(l.clients, cs)
	l.mu.Unlock()
	return cs
}

// click searches as cs with clickQuery and calls files_list_directory,
// which the search showed second.
func click(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	searchNames(t, cs, clickQuery)
	callText(t, cs, MetaCallTool, map[string]any{"name": "files_list_directory", "arguments": map[string]any{"path": "/tmp"}})
}

// waitFirst waits until cs's search for clickQuery ranks want first.
func waitFirst(t *testing.T, cs *mcp.ClientSession, want, who string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		got := firstOf(searchNames(t, cs, clickQuery))
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q still ranks %s first after %v, want %s", who, clickQuery, got, waitFor, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLoaded waits until l's click store has replayed what is stored.
func (l *learner) waitLoaded(t *testing.T) {
	t.Helper()
	waitUntil(t, l.g.clicks.store.loaded.Load, "the click store to be read")
}

// waitRounds waits until l's click store has run n more rounds.
func (l *learner) waitRounds(t *testing.T, n int64) {
	t.Helper()
	s := l.g.clicks.store
	target := s.rounds.Load() + n
	waitUntil(t, func() bool { return s.rounds.Load() >= target }, "%d rounds of the click store", n)
}

// stateBackends runs f on a SQLite file and on a Postgres database.
func stateBackends(t *testing.T, f func(t *testing.T, state func() string)) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, func() string { return filepath.Join(t.TempDir(), "state.db") })
	})
	t.Run("postgres", func(t *testing.T) {
		pg := testservice.Postgres(t)
		f(t, func() string { return pg.CreateDatabase("learning") })
	})
}

// What a gateway learnt, it still knows after a restart on the same
// state database: for the tenant it learnt for, not for another.
func TestLearningSurvivesARestart(t *testing.T) {
	stateBackends(t, func(t *testing.T, state func() string) {
		path := state()
		first := startLearner(t, path, nil)
		alice := first.connect(t, "alice")
		wantLexicalOrder(t, searchNames(t, alice, clickQuery))
		click(t, alice)
		if got := firstOf(searchNames(t, alice, clickQuery)); got != "files_list_directory" {
			t.Fatalf("before the restart, %q ranks %s first; the test needs the click learnt", clickQuery, got)
		}
		first.stop()

		second := startLearner(t, path, nil)
		dave, bob := second.connect(t, "dave"), second.connect(t, "bob")
		waitFirst(t, dave, "files_list_directory", "dave, of the tenant that learnt it, after the restart")
		if got := firstOf(searchNames(t, bob, clickQuery)); got != "github_get_file_contents" {
			t.Errorf("bob, of another tenant, after the restart: %q ranks %s first, want the index's own order", clickQuery, got)
		}
	})
}

// Replicas on one Postgres state database learn together: a click
// through one re-ranks on the other, a reset through one forgets the
// tenant on both and in the database, and another tenant keeps what it
// taught.
func TestReplicasOnOnePostgresLearnTogether(t *testing.T) {
	pg := testservice.Postgres(t)
	url := pg.CreateDatabase("replicas")
	a, b := startLearner(t, url, nil), startLearner(t, url, nil)
	aAlice, aBob := a.connect(t, "alice"), a.connect(t, "bob")
	bDave, bBob := b.connect(t, "dave"), b.connect(t, "bob")
	wantLexicalOrder(t, searchNames(t, bDave, clickQuery))
	wantLexicalOrder(t, searchNames(t, bBob, clickQuery))

	click(t, aAlice)
	click(t, aBob)
	waitFirst(t, bDave, "files_list_directory", "dave, on the other replica")
	waitFirst(t, bBob, "files_list_directory", "bob, on the other replica")

	a.g.ResetLearning("acme")
	if got := firstOf(searchNames(t, aAlice, clickQuery)); got != "github_get_file_contents" {
		t.Errorf("after the reset of acme, alice on the replica that reset: %s first, want the index's own order", got)
	}
	waitFirst(t, bDave, "github_get_file_contents", "dave, on the other replica, after the reset of acme")
	for _, tt := range []struct {
		who string
		cs  *mcp.ClientSession
	}{{"bob on the replica that reset", aBob}, {"bob on the other replica", bBob}} {
		if got := firstOf(searchNames(t, tt.cs, clickQuery)); got != "files_list_directory" {
			t.Errorf("%s, of globex, after the reset of acme: %s first, want what globex taught, files_list_directory", tt.who, got)
		}
	}
	waitUntil(t, func() bool { return pgClicks(t, url, "acme") == 0 }, "acme's clicks to be deleted from the database")

	// A third replica reads the database as it is now.
	c := startLearner(t, url, nil)
	cDave, cBob := c.connect(t, "dave"), c.connect(t, "bob")
	waitFirst(t, cBob, "files_list_directory", "bob, on a replica started after the reset")
	if got := firstOf(searchNames(t, cDave, clickQuery)); got != "github_get_file_contents" {
		t.Errorf("dave, on a replica started after the reset of acme: %s first, want the index's own order", got)
	}
}

// pgClicks counts tenant's clicks (not resets) in the Postgres database
// at url.
func pgClicks(t *testing.T, url, tenant string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM search_clicks WHERE tenant = $1 AND tool <> ''`, tenant).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// sqliteClicks counts the clicks (not resets) in the SQLite file at
// path, and reports whether it has the table at all.
func sqliteClicks(t *testing.T, path string) (n int, table bool) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'search_clicks'`).Scan(&n); err != nil || n == 0 {
		return 0, false
	}
	if err := db.QueryRow(`SELECT count(*) FROM search_clicks WHERE tool <> ''`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n, true
}

// With learning switched off nothing reaches the state database; with
// it on, the click does.
func TestLearningSwitchedOffWritesNothing(t *testing.T) {
	off := false
	for _, tt := range []struct {
		name  string
		learn *bool
		want  int
	}{
		{"learning on", nil, 1},
		{"learning off", &off, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			l := startLearner(t, path, tt.learn)
			alice := l.connect(t, "alice")
			click(t, alice)
			l.g.ResetLearning("globex")
			l.stop()
			n, table := sqliteClicks(t, path)
			if n != tt.want {
				t.Errorf("%d clicks stored, want %d", n, tt.want)
			}
			if tt.learn != nil && table {
				t.Error("learning off, the click table was made")
			}
		})
	}
}

// A state database that fails (refuses writes, is closed under the
// store, or stops) fails no search and no call: learning goes on in
// memory, each kind of failure is logged once and never with the
// query, and what waited is stored once the database answers again.
func TestLearningGoesOnInMemoryWhenTheStateDatabaseFails(t *testing.T) {
	const refuse = `CREATE TRIGGER refuse BEFORE INSERT ON search_clicks BEGIN SELECT RAISE(ABORT, 'refused'); END`
	for _, tt := range []struct {
		name string
		// state makes the database; fail breaks it and returns what
		// mends it (nil: nothing does) and how to count acme's clicks.
		state  func(t *testing.T) string
		fail   func(t *testing.T, l *learner, state string) (mend func(), count func() int)
		logged []string
	}{
		{"sqlite refuses the writes", func(t *testing.T) string {
			return filepath.Join(t.TempDir(), "state.db")
		}, func(t *testing.T, l *learner, path string) (func(), func() int) {
			execSQLite(t, path, refuse)
			return func() { execSQLite(t, path, `DROP TRIGGER refuse`) },
				func() int { n, _ := sqliteClicks(t, path); return n }
		}, []string{clickFailureMessages[clickWriteFailed]}},
		{"the database is closed under the store", func(t *testing.T) string {
			return filepath.Join(t.TempDir(), "state.db")
		}, func(t *testing.T, l *learner, _ string) (func(), func() int) {
			l.g.clicks.store.db.Close()
			return nil, nil
		}, []string{clickFailureMessages[clickWriteFailed], clickFailureMessages[clickReadFailed]}},
		{"postgres stops", nil, nil, []string{clickFailureMessages[clickWriteFailed], clickFailureMessages[clickReadFailed]}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.state == nil {
				pg := testservice.Postgres(t)
				tt.state = func(*testing.T) string { return pg.CreateDatabase("stops") }
				tt.fail = func(t *testing.T, _ *learner, url string) (func(), func() int) {
					pg.Stop()
					return pg.Start, func() int { return pgClicks(t, url, "acme") }
				}
			}
			state := tt.state(t)
			l := startLearner(t, state, nil)
			alice, carol, dave := l.connect(t, "alice"), l.connect(t, "carol"), l.connect(t, "dave")
			wantLexicalOrder(t, searchNames(t, dave, clickQuery))
			l.waitLoaded(t)
			mend, count := tt.fail(t, l, state)

			click(t, alice) // fails the test if the caller sees an error
			if got := firstOf(searchNames(t, dave, clickQuery)); got != "files_list_directory" {
				t.Errorf("with the database failing, %q ranks %s first, want files_list_directory learnt in memory", clickQuery, got)
			}
			l.waitRounds(t, 3)
			click(t, carol)
			l.waitRounds(t, 3)
			logs := l.logs.String()
			for _, msg := range tt.logged {
				if n := strings.Count(logs, msg); n != 1 {
					t.Errorf("%q logged %d times, want once:\n%s", msg, n, logs)
				}
			}
			// The request log shows the arguments, sanitized; the click
			// store's lines show no query.
			for line := range strings.Lines(logs) {
				if strings.Contains(line, "state database") && strings.Contains(line, clickQuery) {
					t.Errorf("the click store logs the query: %s", line)
				}
			}
			if mend == nil {
				return
			}
			mend()
			waitUntil(t, func() bool { return count() == 2 }, "the two clicks made while the database failed to be stored")
			waitUntil(t, func() bool { return strings.Contains(l.logs.String(), "works again for learning from use") }, "the recovery to be logged")
		})
	}
}

func execSQLite(t *testing.T, path, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// The table is bounded: rows past the horizon and all but the newest
// keep are pruned, and clicks waiting for a database that does not take
// them are bounded too, a reset replacing its tenant's.
func TestClickStoreIsBounded(t *testing.T) {
	const keep = 50
	path := filepath.Join(t.TempDir(), "state.db")
	model := toolsearch.NewClicks(toolsearch.New(nil), nil)
	now := time.Now()
	s := &clickStore{path: path, replica: "test", logger: slogDiscard, learns: func() bool { return true }, now: time.Now, failing: map[string]bool{}, keep: keep}
	ctx := context.Background()
	if !s.open(ctx) || !s.load(ctx, model) {
		t.Fatal("the store did not open")
	}
	defer s.db.Close()
	for i := range 3 * keep {
		at := now.Add(-time.Duration(i) * time.Minute)
		if i >= 2*keep {
			at = now.Add(-model.Horizon() - time.Duration(i)*time.Minute)
		}
		s.add("acme", fmt.Sprint("query ", i), "tool", at)
	}
	s.write(ctx)
	if n, _ := sqliteClicks(t, path); n != 3*keep {
		t.Fatalf("%d rows written, want %d", n, 3*keep)
	}
	s.prune(ctx, model.Horizon())
	n, _ := sqliteClicks(t, path)
	var old int
	execScan(t, path, `SELECT count(*) FROM search_clicks WHERE at_ms < ?`, []any{now.Add(-model.Horizon()).UnixMilli()}, &old)
	if n > keep || old != 0 {
		t.Errorf("after pruning, %d rows (bound %d), %d past the horizon", n, keep, old)
	}

	// A database that takes nothing (the store is never started): the
	// clicks waiting stay within their bound.
	w := &clickStore{logger: slogDiscard, failing: map[string]bool{}}
	for i := range maxPendingClicks + 10 {
		w.add(fmt.Sprint("tenant", i%3), "query", "tool", now)
	}
	if n := len(w.pending); n != maxPendingClicks {
		t.Errorf("%d clicks wait, bound %d", n, maxPendingClicks)
	}
	w.add("tenant0", "", "", now)
	for _, r := range w.pending[:len(w.pending)-1] {
		if r.tenant == "tenant0" {
			t.Fatal("tenant0's clicks still wait after its reset")
		}
	}
}

func execScan(t *testing.T, path, q string, args []any, dest ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(q, args...).Scan(dest...); err != nil {
		t.Fatal(err)
	}
}

// TestClicksGoToTheStateDatabaseTheCallerOpened: the clicks' database is
// the configuration's state.db, else the one the caller says it opened
// the pins from (Options.StateDB), else the pins store's path where it
// shows in full; a Postgres URL whose password the store hides leaves
// the clicks in memory rather than fail to connect.
func TestClicksGoToTheStateDatabaseTheCallerOpened(t *testing.T) {
	open := func(t *testing.T, path string) *pins.Store {
		t.Helper()
		ps, err := pins.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ps.Close() })
		return ps
	}
	file := filepath.Join(t.TempDir(), "state.db")
	withPassword := func(t *testing.T) string {
		return strings.Replace(testservice.Postgres(t).CreateDatabase("withpw"), "mcpgate@", "mcpgate:secret@", 1) // the test cluster trusts any password
	}
	for _, tt := range []struct {
		name              string
		configured, given string
		pins              string // "": none; "pg": a Postgres URL with a password
		want              string // "pg": that URL
	}{
		{"state.db configured", file, "", "", file},
		{"pins in a file", "", "", file, file},
		{"pins in memory", "", "", ":memory:", ""},
		{"no pins", "", "", "", ""},
		{"pins in Postgres, the caller naming the URL", "", "pg", "pg", "pg"},
		{"pins in Postgres, nobody naming the URL", "", "", "pg", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pg := ""
			if tt.pins == "pg" {
				pg = withPassword(t)
			}
			sub := func(s string) string {
				if s == "pg" {
					return pg
				}
				return s
			}
			var ps *pins.Store
			switch tt.pins {
			case "":
			case ":memory:":
				ps = open(t, "")
			default:
				ps = open(t, sub(tt.pins))
			}
			if got, want := clickStatePath(tt.configured, sub(tt.given), ps), sub(tt.want); got != want {
				t.Errorf("the clicks' database is %q, want %q", got, want)
			}
		})
	}
}

// Clicks made just before the gateway closes are stored, whether or not
// the store had read the database by then.
func TestClicksPendingAtCloseAreStored(t *testing.T) {
	for _, tt := range []struct {
		name   string
		loaded bool
	}{
		{"closed before the first round ends", false},
		{"closed after the stored clicks were read", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			model := toolsearch.NewClicks(toolsearch.New(nil), nil)
			s := &clickStore{path: path, replica: "test", logger: slogDiscard, learns: func() bool { return true }, now: time.Now, failing: map[string]bool{}, poll: time.Hour}
			s.add("acme", "show me the file", "files_list_directory", time.Now())
			s.start(model)
			if tt.loaded {
				waitUntil(t, s.loaded.Load, "the click store to be read")
				s.add("acme", "show me the file", "files_list_directory", time.Now())
			}
			s.close()
			want := map[bool]int{false: 1, true: 2}[tt.loaded]
			if n, _ := sqliteClicks(t, path); n != want {
				t.Errorf("%d clicks stored, want %d", n, want)
			}
		})
	}
}

// TestAStoredQueryHoldsNoSecret: a token pasted into a search query is
// not kept in the state database for the weeks a click lasts.
func TestAStoredQueryHoldsNoSecret(t *testing.T) {
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	path := filepath.Join(t.TempDir(), "state.db")
	s := &clickStore{path: path, replica: "test", logger: slogDiscard, learns: func() bool { return true }, now: time.Now, failing: map[string]bool{}, poll: time.Hour}
	s.add("acme", "list my repos with "+token, "github_list_repos", time.Now())
	s.start(toolsearch.NewClicks(toolsearch.New(nil), nil))
	s.close()
	var query string
	execScan(t, path, `SELECT query FROM search_clicks`, nil, &query)
	if strings.Contains(query, token) || !strings.Contains(query, "list my repos") {
		t.Errorf("stored query %q: want the words without the token", query)
	}
}
