package slogthrottle

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a fake time that tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// step logs n records of msg (with attrs) after moving the clock by
// advance; a step with flush set calls Flush instead.
type step struct {
	advance time.Duration
	msg     string
	n       int
	attrs   []any
	with    []any // logger.With attributes for this step
	level   slog.Level
	flush   bool
}

func flood(msg string, n int) step { return step{msg: msg, n: n} }

func TestThrottle(t *testing.T) {
	const interval = time.Minute
	opts := Options{Limit: 3, Interval: interval}
	tests := []struct {
		name  string
		opts  Options
		steps []step
		want  []string
	}{
		{
			name:  "a burst up to the limit passes whole",
			steps: []step{flood("burst", 3)},
			want:  []string{"INFO burst", "INFO burst", "INFO burst"},
		},
		{
			name:  "a flood is cut at the limit",
			steps: []step{flood("flood", 100000)},
			want:  []string{"INFO flood", "INFO flood", "INFO flood"},
		},
		{
			name: "the next record after the interval brings the summary with the count",
			steps: []step{
				flood("flood", 100),
				{advance: interval, msg: "flood", n: 1},
			},
			want: []string{"INFO flood", "INFO flood", "INFO flood",
				"INFO suppressed 97 similar messages message=flood count=97", "INFO flood"},
		},
		{
			name: "a record of another kind brings the summary too",
			steps: []step{
				flood("flood", 10),
				{advance: interval, msg: "other", n: 1},
			},
			want: []string{"INFO flood", "INFO flood", "INFO flood",
				"INFO suppressed 7 similar messages message=flood count=7", "INFO other"},
		},
		{
			name: "no summary before the interval has passed",
			steps: []step{
				flood("flood", 10),
				{advance: interval / 2, msg: "other", n: 1},
			},
			want: []string{"INFO flood", "INFO flood", "INFO flood", "INFO other"},
		},
		{
			name: "at most one summary per kind per interval",
			steps: []step{
				flood("flood", 10),
				{advance: interval, msg: "flood", n: 10},
				{advance: interval / 2, msg: "other", n: 1},
				{advance: interval / 2, msg: "other", n: 1},
			},
			want: []string{"INFO flood", "INFO flood", "INFO flood",
				"INFO suppressed 7 similar messages message=flood count=7", "INFO flood", "INFO flood", "INFO flood",
				"INFO other",
				"INFO suppressed 7 similar messages message=flood count=7", "INFO other"},
		},
		{
			name: "Flush writes what is pending before it is due",
			steps: []step{
				flood("flood", 10),
				{flush: true},
				{flush: true},
			},
			want: []string{"INFO flood", "INFO flood", "INFO flood",
				"INFO suppressed 7 similar messages message=flood count=7"},
		},
		{
			name: "messages and levels are kinds of their own",
			steps: []step{
				flood("a", 5),
				flood("b", 5),
				{msg: "a", n: 5, level: slog.LevelWarn},
				{flush: true},
			},
			want: []string{"INFO a", "INFO a", "INFO a", "INFO b", "INFO b", "INFO b", "WARN a", "WARN a", "WARN a",
				"INFO suppressed 2 similar messages message=a count=2",
				"WARN suppressed 2 similar messages message=a count=2",
				"INFO suppressed 2 similar messages message=b count=2"},
		},
		{
			name: "loggers derived with With share the state",
			steps: []step{
				{msg: "m", n: 2, with: []any{"upstream", "x"}},
				{msg: "m", n: 2, with: []any{"upstream", "y"}},
				{flush: true},
			},
			want: []string{"INFO m upstream=x", "INFO m upstream=x", "INFO m upstream=y",
				"INFO suppressed 1 similar messages upstream=y message=m count=1"},
		},
		{
			name: "KeyAttr from With makes kinds of their own",
			opts: Options{Limit: 3, Interval: interval, KeyAttr: "upstream"},
			steps: []step{
				{msg: "m", n: 4, with: []any{"upstream", "x"}},
				{msg: "m", n: 4, with: []any{"upstream", "y"}},
				{flush: true},
			},
			want: []string{"INFO m upstream=x", "INFO m upstream=x", "INFO m upstream=x",
				"INFO m upstream=y", "INFO m upstream=y", "INFO m upstream=y",
				"INFO suppressed 1 similar messages upstream=x message=m count=1",
				"INFO suppressed 1 similar messages upstream=y message=m count=1"},
		},
		{
			name: "KeyAttr from the record makes kinds of their own and is named in the summary",
			opts: Options{Limit: 1, Interval: interval, KeyAttr: "upstream"},
			steps: []step{
				{msg: "m", n: 2, attrs: []any{"upstream", "x"}},
				{msg: "m", n: 2, attrs: []any{"upstream", "y"}},
				{flush: true},
			},
			want: []string{"INFO m upstream=x", "INFO m upstream=y",
				"INFO suppressed 1 similar messages message=m count=1 upstream=x",
				"INFO suppressed 1 similar messages message=m count=1 upstream=y"},
		},
		{
			name: "kinds beyond MaxKeys share one bucket",
			opts: Options{Limit: 2, Interval: interval, MaxKeys: 2},
			steps: []step{
				flood("k0", 1), flood("k1", 1), flood("k2", 1), flood("k3", 1), flood("k4", 1), flood("k5", 1),
				{flush: true},
			},
			want: []string{"INFO k0", "INFO k1", "INFO k2", "INFO k3",
				"INFO suppressed 2 similar messages message=(kinds beyond MaxKeys) count=2"},
		},
		{
			name: "idle kinds are forgotten when the table is full",
			opts: Options{Limit: 1, Interval: interval, MaxKeys: 2},
			steps: []step{
				flood("k0", 1), flood("k1", 1),
				{advance: interval, msg: "k2", n: 2},
				{msg: "k3", n: 2},
				{flush: true},
			},
			want: []string{"INFO k0", "INFO k1", "INFO k2", "INFO k3",
				"INFO suppressed 1 similar messages message=k2 count=1",
				"INFO suppressed 1 similar messages message=k3 count=1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			o := tc.opts
			if o.Limit == 0 {
				o = opts
			}
			o.Now = clk.now
			h := New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime}), &o)
			ctx := context.Background()
			for _, s := range tc.steps {
				clk.t = clk.t.Add(s.advance)
				if s.flush {
					if err := h.Flush(ctx); err != nil {
						t.Fatal(err)
					}
					continue
				}
				l := slog.New(h).With(s.with...)
				for range s.n {
					l.Log(ctx, s.level, s.msg, s.attrs...)
				}
			}
			if got := lines(buf.String()); !equal(got, tc.want) {
				t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tc.want, "\n\t"))
			}
			if n := len(h.st.keys); n > o.MaxKeys+1 && o.MaxKeys > 0 {
				t.Errorf("%d kinds tracked, over MaxKeys %d", n, o.MaxKeys)
			}
		})
	}
}

// A stream of distinct kinds keeps the table within MaxKeys.
func TestKindsAreBounded(t *testing.T) {
	var buf bytes.Buffer
	h := New(slog.NewTextHandler(&buf, nil), &Options{MaxKeys: 50})
	l := slog.New(h)
	for i := range 10000 {
		l.Info(fmt.Sprint("kind ", i))
	}
	if n := len(h.st.keys); n > 50+1 {
		t.Errorf("%d kinds tracked", n)
	}
	if n := strings.Count(buf.String(), "\n"); n > 50+10 {
		t.Errorf("%d lines written", n)
	}
}

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey && len(groups) == 0 {
		return slog.Attr{}
	}
	return a
}

// lines turns "level=INFO msg=m k=v" lines into "INFO m k=v".
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		l = strings.TrimPrefix(l, "level=")
		l = strings.Replace(l, " msg=", " ", 1)
		l = strings.ReplaceAll(l, `"`, "")
		out = append(out, l)
	}
	return out
}

func equal(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

// Records logged from many goroutines at once are each either written or
// counted in a summary.
func TestConcurrentFloodIsAccountedFor(t *testing.T) {
	var buf syncBuffer
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} // still, so that no token comes back
	h := New(slog.NewTextHandler(&buf, nil), &Options{Limit: 5, Now: clk.now})
	l := slog.New(h).With("upstream", "x")
	const goroutines, each = 8, 5000
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				l.Warn("garbage")
			}
		})
	}
	wg.Wait()
	if err := h.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	written := strings.Count(out, "msg=garbage")
	var suppressed int
	if i := strings.Index(out, "count="); i >= 0 {
		fmt.Sscan(out[i+len("count="):], &suppressed)
	}
	if written != 5 || written+suppressed != goroutines*each {
		t.Errorf("%d written, %d suppressed; want 5 and %d in all\n%s", written, suppressed, goroutines*each, out)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
