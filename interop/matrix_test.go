package interop

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
)

// row is one pair of the matrix: a client and a server that held a
// session over one transport. Each subtest fills its row; TestMain prints
// the rows once every test has run.
type row struct {
	Client, Server, Transport string
	// Offered is the revision the client put in initialize ("default" when
	// the test left the choice to the client); Negotiated is what the
	// session ran at, as the client reported it and, where the server can
	// tell, as the server saw it.
	Offered, Negotiated string
	checks              []string
	Result              string
	Note                string
}

// check notes a step of the session that passed.
func (r *row) check(name string) {
	matrix.Lock()
	defer matrix.Unlock()
	for _, c := range r.checks {
		if c == name {
			return
		}
	}
	r.checks = append(r.checks, name)
}

func (r *row) setNegotiated(v string) {
	matrix.Lock()
	r.Negotiated = v
	matrix.Unlock()
}

func (r *row) note(format string, args ...any) {
	matrix.Lock()
	defer matrix.Unlock()
	if r.Note != "" {
		r.Note += "; "
	}
	r.Note += fmt.Sprintf(format, args...)
}

var matrix struct {
	sync.Mutex
	rows []*row
}

// record adds a row for the running (sub)test; its result is set when the
// test ends.
func record(t *testing.T, client, server, transport, offered string) *row {
	if offered == "" {
		offered = "default"
	}
	r := &row{Client: client, Server: server, Transport: transport, Offered: offered, Result: "?"}
	matrix.Lock()
	matrix.rows = append(matrix.rows, r)
	matrix.Unlock()
	t.Cleanup(func() {
		matrix.Lock()
		defer matrix.Unlock()
		switch {
		case t.Skipped():
			r.Result = "skip"
		case t.Failed():
			r.Result = "FAIL"
		default:
			r.Result = "pass"
		}
	})
	return r
}

// printMatrix writes the rows as a Markdown table.
func printMatrix(w io.Writer) {
	matrix.Lock()
	defer matrix.Unlock()
	if len(matrix.rows) == 0 {
		return
	}
	// Top-level tests run in parallel: order the rows by pair, our server
	// first, then the revisions in order ("default" first).
	rank := map[string]int{"stdio": 0, "streamable-http": 1}
	slices.SortStableFunc(matrix.rows, func(a, b *row) int {
		ours := func(r *row) bool { return strings.HasPrefix(r.Server, "mcpgate") }
		if ours(a) != ours(b) {
			if ours(a) {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.Client+a.Server, b.Client+b.Server); c != 0 {
			return c
		}
		ra, ok := rank[a.Transport]
		if !ok {
			ra = 2
		}
		rb, ok := rank[b.Transport]
		if !ok {
			rb = 2
		}
		if ra != rb {
			return cmp.Compare(ra, rb)
		}
		key := func(r *row) string {
			if r.Offered == "default" {
				return "0"
			}
			return r.Offered
		}
		return cmp.Compare(key(a), key(b))
	})
	head := []string{"client", "server", "transport", "offered", "negotiated", "result", "checks", "note"}
	cells := [][]string{head}
	var pass, fail, skip int
	for _, r := range matrix.rows {
		neg := r.Negotiated
		if neg == "" {
			neg = "-"
		}
		cells = append(cells, []string{r.Client, r.Server, r.Transport, r.Offered, neg, r.Result, strings.Join(r.checks, " "), r.Note})
		switch r.Result {
		case "pass":
			pass++
		case "FAIL":
			fail++
		case "skip":
			skip++
		}
	}
	width := make([]int, len(head))
	for _, c := range cells {
		for i, s := range c {
			width[i] = max(width[i], len([]rune(s)))
		}
	}
	line := func(c []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, s := range c {
			b.WriteString(" " + s + strings.Repeat(" ", width[i]-len([]rune(s))) + " |")
		}
		fmt.Fprintln(w, b.String())
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Interop matrix")
	fmt.Fprintln(w)
	line(cells[0])
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, c := range cells[1:] {
		line(c)
	}
	fmt.Fprintf(w, "\n%d pairs: %d pass, %d fail, %d skip\n", len(matrix.rows), pass, fail, skip)
}

// fatalf fails the test and puts the reason in its row, so the matrix
// says why a pair failed.
func fatalf(t *testing.T, r *row, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if len(msg) > 120 {
		msg = msg[:117] + "..."
	}
	r.note("%s", msg)
	t.Fatal(fmt.Sprintf(format, args...))
}
