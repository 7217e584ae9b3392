package toolsearch

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
)

// The effect of learning from use, on a simulated stream of sessions
// built from the project's development set (internal/evalsearch/devset)
// over the 74 servers of ../shared/eval/tools: each query of the dev half
// is searched once, and the simulated user calls its gold tool when the
// search shows it. Then both halves are searched again: the dev half
// says what the index remembered, the test half (never replayed) whether
// it learnt anything that carries over to other queries.

const (
	streamTools  = "../../shared/eval/tools"
	streamDevset = "../internal/evalsearch/devset"
)

type streamQuery struct {
	kind, text string
	gold       []string
	test       bool
}

// loadStream reads the development set as internal/evalsearch does:
// within each kind, queries alternate between the dev and the test half.
func loadStream(t *testing.T) []streamQuery {
	t.Helper()
	read := func(name string, f func(line []byte) error) {
		fh, err := os.Open(filepath.Join(streamDevset, name))
		if err != nil {
			t.Skipf("no development set (%v)", err)
		}
		defer fh.Close()
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			if err := f(sc.Bytes()); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	type task struct{ ID, Kind string }
	var tasks []task
	texts, golds := map[string]string{}, map[string][]string{}
	opts := jsonv2.RejectUnknownMembers(false)
	read("tasks.jsonl", func(b []byte) error {
		var x task
		err := jsonv2.Unmarshal(b, &x, opts, jsonv2.MatchCaseInsensitiveNames(true))
		tasks = append(tasks, x)
		return err
	})
	read("queries.jsonl", func(b []byte) error {
		var x struct{ ID, Query string }
		err := jsonv2.Unmarshal(b, &x, opts, jsonv2.MatchCaseInsensitiveNames(true))
		texts[x.ID] = x.Query
		return err
	})
	read("gold.jsonl", func(b []byte) error {
		var x struct {
			ID   string
			Gold []string
		}
		err := jsonv2.Unmarshal(b, &x, opts, jsonv2.MatchCaseInsensitiveNames(true))
		golds[x.ID] = x.Gold
		return err
	})
	seen := map[string]int{}
	var out []streamQuery
	for _, tk := range tasks {
		if len(golds[tk.ID]) == 0 {
			continue
		}
		n := seen[tk.Kind]
		seen[tk.Kind]++
		out = append(out, streamQuery{kind: tk.Kind, text: texts[tk.ID], gold: golds[tk.ID], test: n%2 == 1})
	}
	return out
}

// recall is Recall@1 and Recall@5 of the queries keep selects.
type recall struct {
	n, at1, at5 int
}

func (r recall) String() string {
	if r.n == 0 {
		return "   -      -   (n=0)"
	}
	return fmt.Sprintf("%.3f  %.3f  (n=%d)", float64(r.at1)/float64(r.n), float64(r.at5)/float64(r.n), r.n)
}

// rankOf is the rank of q's first gold tool in hits, 0 when absent.
func rankOf(q streamQuery, hits []Hit) int {
	for i, h := range hits {
		if slices.Contains(q.gold, h.Name) {
			return i + 1
		}
	}
	return 0
}

type stream struct {
	qs []streamQuery
	c  *Clicks
}

func (s *stream) ranks() []int {
	out := make([]int, len(s.qs))
	for i, q := range s.qs {
		out[i] = rankOf(q, s.c.Search(context.Background(), "", Query{Text: q.text, K: 10}))
	}
	return out
}

// replay runs the dev half as sessions: a search showing shown hits, then
// a call of the first gold tool among them, if any. It returns the gold
// tools called.
func (s *stream) replay(shown int) map[string]bool {
	called := map[string]bool{}
	for _, q := range s.qs {
		if q.test {
			continue
		}
		hits := s.c.Search(context.Background(), "", Query{Text: q.text, K: shown})
		if r := rankOf(q, hits); r > 0 {
			s.c.Record("", q.text, hits[r-1].Name)
			called[hits[r-1].Name] = true
		}
	}
	return called
}

func sum(qs []streamQuery, ranks []int, keep func(streamQuery) bool) recall {
	var r recall
	for i, q := range qs {
		if !keep(q) {
			continue
		}
		r.n++
		if ranks[i] == 1 {
			r.at1++
		}
		if ranks[i] >= 1 && ranks[i] <= 5 {
			r.at5++
		}
	}
	return r
}

// streamRun is one replay's figures: before and after, by half, kind and
// whether a test query's gold tool was called in the stream.
type streamRun struct {
	rows   []string
	before []recall
	after  []recall
}

func runStream(ix *Index, qs []streamQuery, shown int, opts *ClickOptions) streamRun {
	s := &stream{qs: qs, c: NewClicks(ix, opts)}
	before := s.ranks()
	called := s.replay(shown)
	after := s.ranks()
	seen := func(q streamQuery) bool { return slices.ContainsFunc(q.gold, func(g string) bool { return called[g] }) }
	type row struct {
		name string
		keep func(streamQuery) bool
	}
	rows := []row{
		{"dev (replayed)", func(q streamQuery) bool { return !q.test }},
		{"test (not replayed)", func(q streamQuery) bool { return q.test }},
		{"  gold tool called in stream", func(q streamQuery) bool { return q.test && seen(q) }},
		{"  gold tool never called", func(q streamQuery) bool { return q.test && !seen(q) }},
	}
	for _, k := range []string{"direct", "parameter-heavy", "cross-server", "ambiguous", "paraphrase"} {
		rows = append(rows, row{"  test " + k, func(q streamQuery) bool { return q.test && q.kind == k }})
	}
	var out streamRun
	for _, r := range rows {
		out.rows = append(out.rows, r.name)
		out.before = append(out.before, sum(qs, before, r.keep))
		out.after = append(out.after, sum(qs, after, r.keep))
	}
	return out
}

func (r streamRun) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-30s  %-24s  %s\n", "", "before: R@1    R@5", "after: R@1    R@5")
	for i, name := range r.rows {
		fmt.Fprintf(&b, "%-30s  %-24s  %s\n", name, r.before[i], r.after[i])
	}
	return b.String()
}

// The replayed half is found better after one pass of the stream, and the
// half that was never replayed is not found worse, but for 2% of its
// queries. The figures are logged (go test -run TestClickStream -v
// ./toolsearch).
func TestClickStreamRemembersAndDoesNotHarmOtherQueries(t *testing.T) {
	qs := loadStream(t)
	es, err := LoadCatalog(streamTools)
	if err != nil {
		t.Skipf("no catalog of the 74 servers (%v)", err)
	}
	ix := New(nil)
	ix.Add(es...)
	for _, shown := range []int{10, 5} {
		r := runStream(ix, qs, shown, nil)
		t.Logf("%d tools, %d queries; the user sees %d hits and calls the gold tool among them\n%s", len(es), len(qs), shown, r.table())
		if r.after[0].at1 <= r.before[0].at1 {
			t.Errorf("shown %d: the replayed half's Recall@1 did not rise: %v, then %v", shown, r.before[0], r.after[0])
		}
		// A click is evidence for other queries with the same words too,
		// and a query or two of another task may lose a place for it;
		// more than that is harm. Gains on the queries whose tool was
		// called must not hide it: those whose tool was not are checked
		// alone too.
		for _, row := range []int{1, 3} {
			b, a := r.before[row], r.after[row]
			if slack := b.n / 50; a.at1 < b.at1-slack || a.at5 < b.at5-slack {
				t.Errorf("shown %d: %s: found worse: %v, then %v", shown, strings.TrimSpace(r.rows[row]), b, a)
			}
		}
	}
}

// notesIndex is a small catalog whose lexical ranking the click tests
// change: "add a note" ranks add_task first.
func notesIndex() *Index {
	ix := New(nil)
	ix.SetServer("notes", entriesOf(
		tool("create_note", "Create a note with a title and a body.", "title", "body"),
		tool("add_task", "Add a task to the to-do list.", "task"),
		tool("write_file", "Write text to a file.", "path", "text"),
		tool("list_notes", "List the notes."),
	))
	return ix
}

func clickSearch(c *Clicks, tenant, text string) []string {
	return names(c.Search(context.Background(), tenant, Query{Text: text}))
}

func first(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// A clock the tests move by hand.
type testClock struct{ now time.Time }

func (c *testClock) Now() time.Time          { return c.now }
func (c *testClock) advance(d time.Duration) { c.now = c.now.Add(d) }

func TestClicksRaiseTheToolCalledForTheSameWords(t *testing.T) {
	ix := notesIndex()
	c := NewClicks(ix, nil)
	if got := first(clickSearch(c, "", "add a note")); got != "add_task" {
		t.Fatalf("before any click, %q ranks %s first; the test needs add_task there", "add a note", got)
	}
	for range 3 {
		c.Record("", "add a note", "create_note")
	}
	for _, tt := range []struct{ query, want string }{
		{"add a note", "create_note"},
		{"please add a note", "create_note"}, // the same words and a filler
		{"add a task", "add_task"},           // one word shared: not enough
	} {
		if got := first(clickSearch(c, "", tt.query)); got != tt.want {
			t.Errorf("after three clicks, %q ranks %s first, want %s", tt.query, got, tt.want)
		}
	}
}

func TestClicksAddAToolTheQueryDoesNotMatchOnlyOnStrongEvidence(t *testing.T) {
	ix := notesIndex()
	c := NewClicks(ix, nil)
	if got := clickSearch(c, "", "remember the milk"); len(got) != 0 {
		t.Fatalf("the test needs a query that matches nothing; %q matches %v", "remember the milk", got)
	}
	c.Record("", "remember the milk", "create_note")
	noNotes := func(name string) bool { return name != "create_note" }
	for _, tt := range []struct {
		name  string
		query string
		allow func(string) bool
		want  string
	}{
		{"every word led there", "remember the milk", nil, "create_note"},
		{"half the words led there once", "remember the eggs", nil, ""},
		{"a tool the caller may not see", "remember the milk", noNotes, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := names(c.Search(context.Background(), "", Query{Text: tt.query, Allow: tt.allow}))
			if first(got) != tt.want {
				t.Errorf("%q: %v, want %q first", tt.query, got, tt.want)
			}
		})
	}
	c.Record("", "remember the milk", "create_note")
	if got := clickSearch(c, "", "remember the eggs"); first(got) != "create_note" {
		t.Errorf("after a second click, %q gives %v, want create_note", "remember the eggs", got)
	}
}

func TestClicksOfOneTenantNeverChangeAnothersRanking(t *testing.T) {
	ix := notesIndex()
	c := NewClicks(ix, nil)
	for range 5 {
		c.Record("acme", "add a note", "create_note")
		c.Record("acme", "remember the milk", "create_note")
	}
	for _, tt := range []struct {
		tenant, query string
		want          []string
	}{
		{"acme", "add a note", []string{"create_note", "add_task", "list_notes", "write_file"}},
		{"globex", "add a note", search(ix, "add a note")},
		{"", "add a note", search(ix, "add a note")},
		{"globex", "remember the milk", search(ix, "remember the milk")},
	} {
		if got := clickSearch(c, tt.tenant, tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("tenant %q, %q: %v, want %v", tt.tenant, tt.query, got, tt.want)
		}
	}
}

func TestClicksResetForgetsOneTenant(t *testing.T) {
	ix := notesIndex()
	c := NewClicks(ix, nil)
	for range 3 {
		c.Record("acme", "add a note", "create_note")
		c.Record("globex", "add a note", "create_note")
	}
	c.Reset("acme")
	if got, want := clickSearch(c, "acme", "add a note"), search(ix, "add a note"); !slices.Equal(got, want) {
		t.Errorf("acme after Reset: %v, want the index's own %v", got, want)
	}
	if got := first(clickSearch(c, "globex", "add a note")); got != "create_note" {
		t.Errorf("globex after acme's Reset ranks %s first, want create_note: it kept its clicks", got)
	}
}

// madeUpWord is a made-up word, the i-th: letters only, so that it is neither a
// value nor a stop word.
func madeUpWord(i int) string {
	b := []byte("zq")
	for range 3 {
		b = append(b, byte('a'+i%26))
		i /= 26
	}
	return string(b)
}

func TestClicksAreBoundedPerTenant(t *testing.T) {
	const terms, tools = 8, 3
	ix := notesIndex()
	c := NewClicks(ix, &ClickOptions{Terms: terms, ToolsPerTerm: tools})
	// A strong term, then many weak ones: the strong one stays.
	for range 5 {
		c.Record("acme", "note", "create_note")
	}
	for i := range 100 {
		c.Record("acme", madeUpWord(i), "create_note")
		c.Record("globex", madeUpWord(i), "create_note")
	}
	// One term to many tools: the tool clicked most often stay.
	for i := range 10 {
		for range i + 1 {
			c.Record("acme", "note", fmt.Sprintf("tool%d", i))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tenant := range []string{"acme", "globex"} {
		if n := len(c.tenants[tenant]); n > terms || n == 0 {
			t.Errorf("%s remembers %d terms, want 1 to %d", tenant, n, terms)
		}
	}
	note := c.tenants["acme"]["note"]
	if note == nil {
		t.Fatal("the term clicked five times was forgotten for terms clicked once")
	}
	var kept []string
	for _, x := range note.tools {
		kept = append(kept, x.name)
	}
	slices.Sort(kept)
	if want := []string{"tool7", "tool8", "tool9"}; !slices.Equal(kept, want) {
		t.Errorf("the term keeps %v, want the %d clicked most, %v", kept, tools, want)
	}
}

func TestClicksFadeWithTime(t *testing.T) {
	ix := notesIndex()
	clock := &testClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	const halfLife = 24 * time.Hour
	c := NewClicks(ix, &ClickOptions{HalfLife: halfLife, Now: clock.Now})
	for range 6 {
		c.Record("", "add a note", "create_note")
	}
	for _, tt := range []struct {
		after time.Duration
		want  string
	}{
		{0, "create_note"},
		{halfLife, "create_note"},  // 3 clicks, of 4 with the imaginary one
		{4 * halfLife, "add_task"}, // 0.375 of 1.375: too faint
	} {
		clock.now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(tt.after)
		if got := first(clickSearch(c, "", "add a note")); got != tt.want {
			t.Errorf("%v after the clicks, %s is first, want %s", tt.after, got, tt.want)
		}
	}
	clock.advance(10 * halfLife)
	if ev := c.evidence("", "add a note"); len(ev) != 0 {
		t.Errorf("after 14 half-lives the clicks still count: %v", ev)
	}
	c.mu.Lock()
	n := len(c.tenants[""])
	c.mu.Unlock()
	if n != 0 {
		t.Errorf("after 14 half-lives %d terms are still kept", n)
	}
}

func TestClicksIgnoreWhatSaysNothing(t *testing.T) {
	ix := notesIndex()
	var long strings.Builder
	for i := range 1000 {
		long.WriteString(madeUpWord(i) + " ")
	}
	for _, tt := range []struct {
		name, query, tool string
		terms             int // the most terms it may leave
	}{
		{"an empty query", "", "create_note", 0},
		{"stop words only", "the of and", "create_note", 0},
		{"values only", "https://example.com 2026-01-02 42", "create_note", 0},
		{"no tool", "add a note", "", 0},
		{"a very long query", long.String(), "create_note", maxClickTerms},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClicks(ix, nil)
			c.Record("", tt.query, tt.tool)
			c.Search(context.Background(), "", Query{Text: tt.query})
			c.mu.Lock()
			defer c.mu.Unlock()
			if n := len(c.tenants[""]); n > tt.terms {
				t.Errorf("%d terms recorded, want at most %d", n, tt.terms)
			}
		})
	}
}

func TestClicksConcurrently(t *testing.T) {
	ix := notesIndex()
	c := NewClicks(ix, &ClickOptions{Terms: 16})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				tenant := fmt.Sprint(g % 2)
				c.Record(tenant, "add a note "+madeUpWord(i), "create_note")
				c.Search(context.Background(), tenant, Query{Text: "add a note"})
				if i%50 == 0 {
					c.Reset(tenant)
				}
			}
		})
	}
	wg.Wait()
}

// Clicks stored as they happened and replayed later, in their order or
// in any other, leave the evidence that recording them live left: so a
// gateway that reads its clicks back after a restart, or another
// replica's as they come, ranks as if it had seen them itself.
func TestClicksReplayedGiveTheEvidenceOfLiveRecording(t *testing.T) {
	const halfLife = 24 * time.Hour
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type click struct {
		tenant, query, tool string
		at                  time.Duration // after start
	}
	for _, tt := range []struct {
		name   string
		clicks []click
		end    time.Duration // when the evidence is read, after start
	}{
		{"one word, clicks days apart", []click{
			{"", "note", "create_note", 0},
			{"", "note", "create_note", 2 * halfLife},
			{"", "note", "add_task", 3 * halfLife},
		}, 4 * halfLife},
		{"words and tools mixed over weeks", []click{
			{"", "add a note", "create_note", 0},
			{"", "remember the milk", "create_note", halfLife / 3},
			{"", "add a task", "add_task", halfLife},
			{"", "add a note", "add_task", 5 * halfLife},
			{"", "write the note to a file", "write_file", 9 * halfLife},
			{"", "add a note", "create_note", 12 * halfLife},
		}, 13 * halfLife},
		{"clicks at one instant", []click{
			{"", "add a note", "create_note", halfLife},
			{"", "add a note", "add_task", halfLife},
			{"", "add a note", "create_note", halfLife},
		}, 2 * halfLife},
		{"a click past the horizon counts for nothing", []click{
			{"", "add a note", "add_task", 0},
			{"", "add a note", "create_note", 8 * halfLife},
		}, 8 * halfLife},
		{"tenants apart", []click{
			{"acme", "add a note", "create_note", 0},
			{"globex", "add a note", "add_task", halfLife},
			{"acme", "add a note", "add_task", 2 * halfLife},
		}, 3 * halfLife},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := &testClock{now: start}
			live := NewClicks(notesIndex(), &ClickOptions{HalfLife: halfLife, Now: clock.Now})
			for _, c := range tt.clicks {
				clock.now = start.Add(c.at)
				live.Record(c.tenant, c.query, c.tool)
			}
			clock.now = start.Add(tt.end)
			reversed := slices.Clone(tt.clicks)
			slices.Reverse(reversed)
			byTool := slices.Clone(tt.clicks)
			slices.SortStableFunc(byTool, func(a, b click) int { return strings.Compare(a.tool, b.tool) })
			for _, order := range []struct {
				name   string
				clicks []click
			}{{"in order", tt.clicks}, {"reversed", reversed}, {"by tool", byTool}} {
				replayed := NewClicks(notesIndex(), &ClickOptions{HalfLife: halfLife, Now: clock.Now})
				for _, c := range order.clicks {
					replayed.RecordAt(c.tenant, c.query, c.tool, start.Add(c.at))
				}
				for _, tenant := range []string{"", "acme", "globex"} {
					for _, q := range []string{"add a note", "note", "remember the milk", "write a file", "add a task"} {
						want, got := live.evidence(tenant, q), replayed.evidence(tenant, q)
						if !sameEvidence(got, want) {
							t.Errorf("%s: tenant %q, %q: evidence %v, want %v as recorded live", order.name, tenant, q, got, want)
						}
					}
				}
			}
		})
	}
}

// sameEvidence reports whether a and b give the same tools the same
// evidence, but for rounding.
func sameEvidence(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || math.Abs(x-y) > 1e-9 {
			return false
		}
	}
	return true
}
