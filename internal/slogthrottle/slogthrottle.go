// Package slogthrottle limits how many log records of one kind reach a
// slog.Handler, so that a peer that misbehaves in a loop (a server writing
// garbage to stdout, a flood of notifications) costs a few lines a minute
// instead of a million, and says how many it left out.
//
// A kind is the record's message and level, and optionally the value of
// one attribute ([Options.KeyAttr]). Each kind has a token bucket: up to
// [Options.Limit] records pass at once, and Limit more each
// [Options.Interval]. Records past that are counted, and at most once per
// Interval per kind a summary record "suppressed N similar messages"
// reports the count.
//
// # No goroutine
//
// Summaries are written lazily: a Handle call of any kind writes the
// summaries that are due, and [Handler.Flush] writes every pending one
// (call it at shutdown). A flood that stops is therefore summarized on the
// next record logged through the handler, or at Flush.
//
// # Sharing
//
// Handlers derived with WithAttrs and WithGroup share the throttle state
// of the handler they came from: logger.With("upstream", name) on one
// throttled logger throttles every upstream's "same" message together. To
// limit each upstream on its own, wrap each upstream's logger with [New]
// separately, or set KeyAttr to "upstream".
package slogthrottle

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Options configure a Handler. The zero value lets 10 records of a kind
// through per minute, over at most 1000 kinds.
type Options struct {
	// Limit is how many records of one kind pass per Interval, and at
	// once after a quiet spell. Zero means 10.
	Limit int
	// Interval is the period of Limit, and the shortest time between two
	// summaries of one kind. Zero means one minute.
	Interval time.Duration
	// MaxKeys bounds the kinds tracked. When every slot holds a kind
	// still being throttled, records of further kinds share one bucket.
	// Zero means 1000.
	MaxKeys int
	// KeyAttr names an attribute whose value joins the message and level
	// in the kind, such as "upstream"; it is looked for among the
	// record's attributes and those added with WithAttrs outside any
	// group. Empty means none.
	KeyAttr string
	// Now reads the clock. Nil means time.Now; tests give a fake clock.
	Now func() time.Time
}

// SummaryMessage is the message of a summary record, followed by the
// count; its attributes are "message" (the suppressed records' message),
// "count", and KeyAttr's value when set.
const SummaryMessage = "suppressed %d similar messages"

// Handler throttles records on their way to another handler.
type Handler struct {
	inner   slog.Handler
	st      *state
	keyVal  string // KeyAttr's value from WithAttrs
	grouped bool   // a group is open: later attributes are nested
}

type key struct {
	msg      string
	level    slog.Level
	attr     string
	overflow bool // the shared bucket of kinds beyond MaxKeys
}

type entry struct {
	lim     *rate.Limiter
	dropped int
	due     time.Time    // when the summary of the drops may be written
	via     slog.Handler // the handler the last dropped record came through
	attr    []slog.Attr  // KeyAttr, when the record rather than via held it
}

type state struct {
	opts Options

	mu        sync.Mutex
	keys      map[key]*entry
	nextDue   time.Time // the earliest due of entries with drops; zero if none
	lastPurge time.Time
}

// New returns a Handler that passes records to inner, throttled as opts
// say (nil means the defaults).
func New(inner slog.Handler, opts *Options) *Handler {
	st := &state{keys: map[key]*entry{}}
	if opts != nil {
		st.opts = *opts
	}
	o := &st.opts
	if o.Limit <= 0 {
		o.Limit = 10
	}
	if o.Interval <= 0 {
		o.Interval = time.Minute
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = 1000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Handler{inner: inner, st: st}
}

// Enabled reports whether inner handles records at level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// WithAttrs returns a handler that adds attrs to each record and shares
// h's throttle state.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := *h
	h2.inner = h.inner.WithAttrs(attrs)
	if k := h.st.opts.KeyAttr; k != "" && !h.grouped {
		for _, a := range attrs {
			if a.Key == k {
				h2.keyVal = a.Value.String()
			}
		}
	}
	return &h2
}

// WithGroup returns a handler that nests later attributes in a group and
// shares h's throttle state.
func (h *Handler) WithGroup(name string) slog.Handler {
	h2 := *h
	h2.inner = h.inner.WithGroup(name)
	h2.grouped = h.grouped || name != ""
	return &h2
}

// Handle passes r on unless its kind is over its limit, after writing the
// summaries that are due.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	k := key{msg: r.Message, level: r.Level, attr: h.keyVal}
	var attr []slog.Attr
	if ka := h.st.opts.KeyAttr; ka != "" && !h.grouped {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == ka {
				k.attr, attr = a.Value.String(), []slog.Attr{a}
				return false
			}
			return true
		})
	}
	now := h.st.opts.Now()
	pass, due := h.st.admit(k, now, h.inner, attr)
	write(ctx, due, now)
	if !pass {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

// Flush writes a summary for every kind with records suppressed since its
// last summary, due or not.
func (h *Handler) Flush(ctx context.Context) error {
	now := h.st.opts.Now()
	h.st.mu.Lock()
	due := h.st.collect(now, true)
	h.st.mu.Unlock()
	return write(ctx, due, now)
}

type summary struct {
	k       key
	dropped int
	via     slog.Handler
	attr    []slog.Attr
}

func write(ctx context.Context, due []summary, now time.Time) error {
	var first error
	for _, s := range due {
		msg := fmt.Sprintf(SummaryMessage, s.dropped)
		r := slog.NewRecord(now, s.k.level, msg, 0)
		if s.k.overflow {
			r.AddAttrs(slog.String("message", "(kinds beyond MaxKeys)"))
		} else {
			r.AddAttrs(slog.String("message", s.k.msg))
		}
		r.AddAttrs(slog.Int("count", s.dropped))
		r.AddAttrs(s.attr...)
		if !s.via.Enabled(ctx, s.k.level) {
			continue
		}
		if err := s.via.Handle(ctx, r); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// admit takes a token of k's bucket, counting the record as dropped when
// there is none, and returns the summaries now due.
func (st *state) admit(k key, now time.Time, via slog.Handler, attr []slog.Attr) (bool, []summary) {
	st.mu.Lock()
	defer st.mu.Unlock()
	e := st.entry(k, now)
	pass := e.lim.AllowN(now, 1)
	if !pass {
		if e.dropped == 0 {
			e.due = now.Add(st.opts.Interval)
			if st.nextDue.IsZero() || e.due.Before(st.nextDue) {
				st.nextDue = e.due
			}
		}
		e.dropped++
		e.via, e.attr = via, attr
	}
	if st.nextDue.IsZero() || now.Before(st.nextDue) {
		return pass, nil
	}
	return pass, st.collect(now, false)
}

// entry finds or makes k's bucket. With the table full it first forgets
// kinds that are idle (a full bucket, nothing to summarize), at most once
// per Interval so that a stream of new kinds does not rescan the table on
// every record; failing that, k shares the overflow bucket.
func (st *state) entry(k key, now time.Time) *entry {
	if e := st.keys[k]; e != nil {
		return e
	}
	if len(st.keys) >= st.opts.MaxKeys && now.Sub(st.lastPurge) >= st.opts.Interval {
		st.lastPurge = now
		for k2, e := range st.keys {
			if e.dropped == 0 && e.lim.TokensAt(now) >= float64(st.opts.Limit) {
				delete(st.keys, k2)
			}
		}
	}
	if len(st.keys) >= st.opts.MaxKeys {
		k = key{level: k.level, overflow: true}
		if e := st.keys[k]; e != nil {
			return e
		}
		// The overflow buckets (one per level) may exceed MaxKeys by the
		// few levels in use.
	}
	e := &entry{lim: rate.NewLimiter(rate.Every(st.opts.Interval/time.Duration(st.opts.Limit)), st.opts.Limit)}
	st.keys[k] = e
	return e
}

// collect takes the summaries that are due (all pending ones when all is
// set) and recomputes nextDue. The caller holds st.mu.
func (st *state) collect(now time.Time, all bool) []summary {
	var out []summary
	st.nextDue = time.Time{}
	for k, e := range st.keys {
		if e.dropped == 0 {
			continue
		}
		if all || !now.Before(e.due) {
			out = append(out, summary{k: k, dropped: e.dropped, via: e.via, attr: e.attr})
			e.dropped, e.via, e.attr = 0, nil, nil
			continue
		}
		if st.nextDue.IsZero() || e.due.Before(st.nextDue) {
			st.nextDue = e.due
		}
	}
	// In a stable order, for readers of the log and for tests.
	slices.SortFunc(out, func(a, b summary) int {
		return cmp.Or(strings.Compare(a.k.msg, b.k.msg), cmp.Compare(a.k.level, b.k.level), strings.Compare(a.k.attr, b.k.attr))
	})
	return out
}
