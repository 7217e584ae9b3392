package pins

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/postgres"
	"github.com/mcpgate/mcpgate/internal/sqlitefile"
	"github.com/mcpgate/mcpgate/taskstore"
)

// Who approved a pin's definition ([Pin.ApprovedBy]).
const (
	// ByFirstUse: the gateway pinned what it first saw, under warn.
	ByFirstUse = "first-use"
	// ByOperator: a person approved it (mcpgate pins approve, or the
	// admin API).
	ByOperator = "operator"
)

// Pin is what the store keeps of one tool of one server.
type Pin struct {
	Server string `json:"server"`
	Tool   string `json:"tool"` // as the upstream names it
	// Hash and Definition are the approved definition; empty when none
	// has been approved yet (a tool first seen under block or approve).
	Hash       string    `json:"hash,omitempty"`
	Definition []byte    `json:"-"`
	ApprovedBy string    `json:"approvedBy,omitempty"`
	Approved   time.Time `json:"approved,omitzero"`
	// SeenHash and SeenDefinition are the latest definition the upstream
	// offered, when it is not the approved one: a change waiting for
	// approval.
	SeenHash       string    `json:"seenHash,omitempty"`
	SeenDefinition []byte    `json:"-"`
	Seen           time.Time `json:"seen,omitzero"`
	First          time.Time `json:"first"`
}

// Pin states, as [Pin.State] reports them.
const (
	StateApproved = "approved" // the upstream offers the approved definition
	StateNew      = "new"      // no definition approved yet
	StateChanged  = "changed"  // the upstream offers another definition than the approved one
)

// State is the pin's state: approved, new or changed.
func (p *Pin) State() string {
	switch {
	case p.Hash == "":
		return StateNew
	case p.SeenHash != "":
		return StateChanged
	}
	return StateApproved
}

// Current is the latest definition the upstream offered: the pending
// one, or else the approved one.
func (p *Pin) Current() (Definition, error) {
	if p.SeenHash != "" {
		return Parse(p.SeenDefinition)
	}
	return Parse(p.Definition)
}

// Store keeps pins in SQLite (a file shared by the gateway and the
// mcpgate pins command, or memory) or in Postgres (a database shared by
// the replicas of a gateway and the command). Another process may
// approve while the gateway runs; Version tells the gateway.
type Store struct {
	db   *sql.DB
	path string // the file, or the URL with its password hidden
	d    *dialect
	// mu orders a write's commit and its count in own with Version's
	// read, so that Version never counts this store's own write. It is
	// taken with a connection held, never while waiting for one.
	mu  sync.Mutex
	own int64 // the changes this store committed
}

// EnvPath names the environment variable that, when set, is the state
// database's default path.
const EnvPath = "MCPGATE_STATE_DB"

// DefaultPath is where the gateway keeps its state when the
// configuration does not say: $MCPGATE_STATE_DB, else state.db beside
// the task store's default file ([taskstore.DefaultPath]).
func DefaultPath() (string, error) {
	if p := os.Getenv(EnvPath); p != "" {
		return p, nil
	}
	p, err := taskstore.DefaultPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), "state.db"), nil
}

// Open opens (creating) the store at path: a SQLite file, or the
// Postgres database of a postgres:// or postgresql:// URL, whose
// password no error shows. An empty path keeps the pins in memory, for
// as long as the Store is open.
func Open(path string) (*Store, error) {
	if postgres.IsURL(path) {
		return openPostgres(path)
	}
	var db *sql.DB
	abs := ""
	var err error
	if path == "" {
		db, err = sql.Open("sqlite", "file::memory:")
	} else {
		db, abs, err = sqlitefile.Open(path, nil)
	}
	if err != nil {
		return nil, err
	}
	// One connection: a write and its count in own are ordered with
	// Version's read through it (and a database in memory lives as long
	// as its connection).
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	if _, err := db.Exec(sqliteSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("state database %s: %w", path, err)
	}
	return &Store{db: db, path: abs, d: sqliteDialect}, nil
}

// Path is the database file's absolute path ("" in memory), or the
// Postgres URL with its password hidden.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Version changes whenever another process or connection (the mcpgate
// pins command, another gateway) commits a change; the store's own
// writes leave it as it is: the count of committed changes of the pins
// (pins_version), less the store's own. Commits to other tables of the
// same database (search_clicks) do not move it.
func (s *Store) Version(ctx context.Context) (int64, error) {
	// The connection first, then mu, as a write takes them: SQLite's
	// store has one connection, which a write holds when it takes mu.
	c, err := s.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	var v int64
	err = c.QueryRowContext(ctx, s.d.version).Scan(&v)
	return v - s.own, err
}

// update runs fn in a write transaction; fn returns how many rows it
// changed, which counts as one change of the store if any.
func (s *Store) update(ctx context.Context, fn func(*sql.Tx) (int64, error)) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.d.lock != nil {
		if err := s.d.lock(ctx, tx); err != nil {
			return err
		}
	}
	n, err := fn(tx)
	if err != nil {
		return err
	}
	bump := n > 0 && s.d.bump != ""
	if bump {
		if _, err := tx.ExecContext(ctx, s.d.bump); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := tx.Commit(); err != nil {
		return err
	}
	if bump {
		s.own++
	}
	return nil
}

// changed adds the rows a statement changed to *n.
func changed(n *int64, res sql.Result, err error) error {
	if err != nil {
		return err
	}
	k, err := res.RowsAffected()
	*n += k
	return err
}

const pinColumns = `server, tool, hash, definition, approved_by, approved_ms, seen_hash, seen_definition, seen_ms, first_ms`

func scanPins(rows *sql.Rows) ([]*Pin, error) {
	defer rows.Close()
	var out []*Pin
	for rows.Next() {
		p := &Pin{}
		var def, seenDef string
		var approved, seen, first int64
		if err := rows.Scan(&p.Server, &p.Tool, &p.Hash, &def, &p.ApprovedBy, &approved, &p.SeenHash, &seenDef, &seen, &first); err != nil {
			return nil, err
		}
		p.Definition, p.SeenDefinition = []byte(def), []byte(seenDef)
		p.Approved, p.Seen, p.First = msTime(approved), msTime(seen), msTime(first)
		out = append(out, p)
	}
	return out, rows.Err()
}

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// List returns the pins of server (every server's when it is ""),
// sorted by server and tool.
func (s *Store) List(ctx context.Context, server string) ([]*Pin, error) {
	if !s.d.storable(server) {
		return nil, nil // no pin has a name the database cannot hold
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+pinColumns+` FROM pins WHERE $1 = '' OR server = $1 ORDER BY server, tool`, server)
	if err != nil {
		return nil, err
	}
	return scanPins(rows)
}

// Server returns the pins of one server, by tool.
func (s *Store) Server(ctx context.Context, server string) (map[string]*Pin, error) {
	ps, err := s.List(ctx, server)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Pin, len(ps))
	for _, p := range ps {
		out[p.Tool] = p
	}
	return out, nil
}

// Get returns one pin, or [ErrNotFound].
func (s *Store) Get(ctx context.Context, server, tool string) (*Pin, error) {
	if !s.d.storable(server, tool) {
		return nil, fmt.Errorf("%w: %q/%q", ErrNotFound, server, tool)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+pinColumns+` FROM pins WHERE server = $1 AND tool = $2`, server, tool)
	if err != nil {
		return nil, err
	}
	ps, err := scanPins(rows)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%w: %s/%s", ErrNotFound, server, tool)
	}
	return ps[0], nil
}

// ErrNotFound: no pin matches.
var ErrNotFound = errors.New("no pin")

// Change is one thing the gateway records after a listing.
type Change struct {
	Kind   ChangeKind
	Server string
	Tool   string
	// Def is the definition to record (Pin and Seen).
	Def Definition
	// Expect is the approved hash the decision was made on: a Seen or
	// Settle change applies only while it is still the approved one, so
	// that an approval made meanwhile is never undone.
	Expect string
}

// ChangeKind says what a [Change] records.
type ChangeKind int

const (
	// ChangePin approves a definition on first use (warn): only while
	// the tool has none approved.
	ChangePin ChangeKind = iota + 1
	// ChangeSeen records a definition waiting for approval.
	ChangeSeen
	// ChangeSettle forgets the waiting definition: the upstream went
	// back to the approved one.
	ChangeSettle
)

// Write records the changes of one listing in one transaction. On
// Postgres a change whose names the database cannot hold (a NUL, or
// bytes that are not UTF-8, in an upstream's tool name) is refused with
// an error, and the others are recorded.
func (s *Store) Write(ctx context.Context, changes []Change) error {
	if len(changes) == 0 {
		return nil
	}
	var refused []error
	err := s.update(ctx, func(tx *sql.Tx) (int64, error) {
		var n int64
		now := time.Now().UnixMilli()
		for _, c := range changes {
			if !s.d.storable(c.Server, c.Tool, c.Expect) {
				refused = append(refused, fmt.Errorf("the pin of %q/%q is not recorded: the database holds only UTF-8 text without NUL characters", c.Server, c.Tool))
				continue
			}
			if err := s.record(ctx, tx, &n, c, now); err != nil {
				return 0, fmt.Errorf("recording the pin of %s/%s: %w", c.Server, c.Tool, err)
			}
		}
		return n, nil
	})
	return errors.Join(append([]error{err}, refused...)...)
}

// record applies one change, adding the rows it changed to *n.
func (s *Store) record(ctx context.Context, tx *sql.Tx, n *int64, c Change, now int64) error {
	switch c.Kind {
	case ChangePin:
		res, err := tx.ExecContext(ctx, `INSERT INTO pins (server, tool, hash, definition, approved_by, approved_ms, first_ms) VALUES ($1, $2, $3, $4, $5, $6, $6)
			ON CONFLICT (server, tool) DO UPDATE SET hash = excluded.hash, definition = excluded.definition, approved_by = excluded.approved_by,
			approved_ms = excluded.approved_ms, seen_hash = '', seen_definition = '', seen_ms = 0 WHERE pins.hash = ''`,
			c.Server, c.Tool, c.Def.Hash(), string(c.Def.JSON()), ByFirstUse, now)
		return changed(n, res, err)
	case ChangeSeen:
		res, err := tx.ExecContext(ctx, `INSERT INTO pins (server, tool, seen_hash, seen_definition, seen_ms, first_ms) VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (server, tool) DO UPDATE SET seen_hash = excluded.seen_hash, seen_definition = excluded.seen_definition, seen_ms = excluded.seen_ms
			WHERE pins.hash = $6`,
			c.Server, c.Tool, c.Def.Hash(), string(c.Def.JSON()), now, c.Expect)
		return changed(n, res, err)
	case ChangeSettle:
		res, err := tx.ExecContext(ctx, `UPDATE pins SET seen_hash = '', seen_definition = '', seen_ms = 0 WHERE server = $1 AND tool = $2 AND hash = $3`,
			c.Server, c.Tool, c.Expect)
		return changed(n, res, err)
	}
	return fmt.Errorf("unknown change %d", c.Kind)
}

// Approval is what [Store.Approve] did to one pin.
type Approval struct {
	Pin *Pin `json:"pin"` // after the approval (before it, when skipped)
	// Skipped, when set, says why the pin was left as it was.
	Skipped string `json:"skipped,omitempty"`
}

// Approve makes the definition each pending pin of server waits with
// the approved one (tool "" for every tool of the server). A definition
// the scanner flags is approved only by naming its tool, never with the
// whole server; naming a tool also vouches for a flagged definition
// pinned on first use. With hash set (a prefix of what `mcpgate pins
// diff` shows), the tool's pending definition must be that one: an
// upstream that changed it again since is not approved unseen.
func (s *Store) Approve(ctx context.Context, server, tool, hash string) ([]Approval, error) {
	if hash != "" && tool == "" {
		return nil, errors.New("a hash approves one definition: name the tool too (SERVER/TOOL)")
	}
	var out []Approval
	err := s.update(ctx, func(tx *sql.Tx) (int64, error) {
		ps, err := s.pending(ctx, tx, server, tool)
		if err != nil {
			return 0, err
		}
		var n int64
		now := time.Now()
		for _, p := range ps {
			a, err := approval(p, tool, hash, now)
			if err != nil {
				return 0, err
			}
			if a == nil {
				continue
			}
			if a.Skipped == "" {
				res, err := tx.ExecContext(ctx, `UPDATE pins SET hash = $1, definition = $2, approved_by = $3, approved_ms = $4, seen_hash = '', seen_definition = '', seen_ms = 0
					WHERE server = $5 AND tool = $6`, a.Pin.Hash, string(a.Pin.Definition), ByOperator, now.UnixMilli(), p.Server, p.Tool)
				if err := changed(&n, res, err); err != nil {
					return 0, err
				}
			}
			out = append(out, *a)
		}
		return n, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pending reads, for Approve, the pins of server (tool "" for all).
func (s *Store) pending(ctx context.Context, tx *sql.Tx, server, tool string) ([]*Pin, error) {
	var ps []*Pin
	if s.d.storable(server, tool) {
		rows, err := tx.QueryContext(ctx, `SELECT `+pinColumns+` FROM pins WHERE server = $1 AND ($2 = '' OR tool = $2) ORDER BY tool`, server, tool)
		if err != nil {
			return nil, err
		}
		if ps, err = scanPins(rows); err != nil {
			return nil, err
		}
	}
	if len(ps) == 0 {
		if tool == "" {
			return nil, fmt.Errorf("%w of server %q: the gateway pins a server's tools when it first lists them", ErrNotFound, server)
		}
		return nil, fmt.Errorf("%w: %s/%s (mcpgate pins list shows the tools, by the names their server gives them)", ErrNotFound, server, tool)
	}
	return ps, nil
}

// approval decides what Approve does to p: approve the definition it
// waits with (the pin as the approval leaves it, at now), skip it (the
// pin as it is, and why), or leave it alone (nil).
func approval(p *Pin, tool, hash string, now time.Time) (*Approval, error) {
	pending := p.SeenHash != ""
	h, def := p.SeenHash, p.SeenDefinition
	if !pending {
		h, def = p.Hash, p.Definition
	}
	// A definition pinned on first use has been approved by nobody:
	// naming its tool vouches for it (which matters where the scanner
	// flags it).
	unvouched := !pending && p.Hash != "" && p.ApprovedBy != ByOperator
	if !pending && !unvouched {
		if tool != "" {
			return &Approval{Pin: p, Skipped: "already approved"}, nil
		}
		return nil, nil
	}
	if hash != "" && !strings.HasPrefix(h, strings.ToLower(hash)) {
		return &Approval{Pin: p, Skipped: fmt.Sprintf("its definition is now %.12s, not %s: review it again (mcpgate pins diff)", h, hash)}, nil
	}
	d, err := Parse(def)
	if err != nil {
		return nil, fmt.Errorf("the pin of %s/%s: %w", p.Server, p.Tool, err)
	}
	if tool == "" {
		if fs := Scan(d); len(fs) > 0 {
			return &Approval{Pin: p, Skipped: fmt.Sprintf("the scanner flags it (%s): approve it by name, %s/%s, once you have read it", fs[0].Rule, p.Server, p.Tool)}, nil
		}
		if !pending {
			return nil, nil // approved on first use, and nothing flagged: nothing to do
		}
	}
	a := *p
	a.Hash, a.Definition, a.ApprovedBy, a.Approved = h, def, ByOperator, now
	a.SeenHash, a.SeenDefinition, a.Seen = "", nil, time.Time{}
	return &Approval{Pin: &a}, nil
}

// Reset forgets the pins of server (tool "" for all of its tools): the
// gateway meets them again as new tools, under the server's policy.
func (s *Store) Reset(ctx context.Context, server, tool string) (int, error) {
	if !s.d.storable(server, tool) {
		return 0, nil // no pin has a name the database cannot hold
	}
	var n int64
	err := s.update(ctx, func(tx *sql.Tx) (int64, error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM pins WHERE server = $1 AND ($2 = '' OR tool = $2)`, server, tool)
		return n, changed(&n, res, err)
	})
	return int(n), err
}

// Report is a pin as `mcpgate pins list` and the gateway's admin API
// show it: its state, and what the scanner flags in its latest
// definition.
type Report struct {
	*Pin
	State    string    `json:"state"`
	Findings []Finding `json:"findings,omitempty"`
}

// Report describes p.
func (p *Pin) Report() Report {
	r := Report{Pin: p, State: p.State()}
	if d, err := p.Current(); err == nil {
		r.Findings = Scan(d)
	}
	return r
}

// Diff is how the definition p waits with differs from the approved
// one: all of it for a tool with none approved, "" when nothing waits.
func (p *Pin) Diff() (string, error) {
	if p.SeenHash == "" {
		return "", nil
	}
	seen, err := Parse(p.SeenDefinition)
	if err != nil {
		return "", err
	}
	var old Definition
	if p.Hash != "" {
		if old, err = Parse(p.Definition); err != nil {
			return "", err
		}
	}
	return Diff(old, seen), nil
}
