package redact

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
)

// Handler is a [log/slog.Handler] that hides secrets in every record
// before passing it on: the message through [String]; each attribute,
// including those given to WithAttrs and those in groups, by its key
// ([Name]: the value becomes [Marker], or every value of a group) and
// by its value (strings through [String], errors by their text, decoded
// JSON and headers through [Value], other values through their JSON
// form). Wrapping a logger's handler once covers every line it writes.
type Handler struct {
	next slog.Handler
	// secret is set inside a group with a secret name: every value in
	// it is hidden.
	secret bool
}

// NewHandler returns a Handler that redacts records and passes them to
// next.
func NewHandler(next slog.Handler) *Handler {
	return &Handler{next: next}
}

// Enabled reports whether the next handler handles records at level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle redacts r and passes it to the next handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs returns a Handler whose next handler has attrs, redacted.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &Handler{next: h.next.WithAttrs(red), secret: h.secret}
}

// WithGroup returns a Handler whose next handler opens the group name.
// In a group with a secret name, every value is hidden.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), secret: h.secret || Name(name)}
}

func (h *Handler) attr(a slog.Attr) slog.Attr {
	return redactAttr(a, h.secret)
}

// redactAttr hides a's value if its key or an enclosing group's is
// secret, and the secrets in the value otherwise.
func redactAttr(a slog.Attr, secret bool) slog.Attr {
	v := a.Value.Resolve()
	a.Key = String(a.Key)
	secret = secret || Name(a.Key)
	switch v.Kind() {
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, e := range g {
			out[i] = redactAttr(e, secret)
		}
		a.Value = slog.GroupValue(out...)
		return a
	case slog.KindBool:
		a.Value = v
		return a
	}
	if secret {
		if v.Kind() == slog.KindAny && v.Any() == nil || v.Kind() == slog.KindString && v.String() == "" {
			a.Value = v
		} else {
			a.Value = slog.StringValue(Marker)
		}
		return a
	}
	switch v.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(String(v.String()))
	case slog.KindAny:
		a.Value = anyValue(v)
	default:
		a.Value = v
	}
	return a
}

// anyValue redacts a value of kind Any. Types the redaction knows keep
// their type; others are redacted through their JSON form (what
// slog.JSONHandler would write), and replaced only where that changed.
// A value whose Error or String method panics (a nil pointer, say) is
// passed on as it is: the next handler cannot show it either.
func anyValue(v slog.Value) (out slog.Value) {
	defer func() {
		if recover() != nil {
			out = v
		}
	}()
	x := v.Any()
	switch x := x.(type) {
	case nil:
		return v
	case error:
		if s, changed := redactString(x.Error()); changed {
			return slog.StringValue(s)
		}
		return v
	case *url.URL:
		return slog.StringValue(String(x.String()))
	case json.RawMessage:
		if r, err := JSON(x); err == nil {
			return slog.AnyValue(json.RawMessage(r))
		}
		return slog.StringValue(String(string(x)))
	case []byte:
		if s, changed := redactString(string(x)); changed {
			return slog.StringValue(s)
		}
		return v
	case map[string]any, []any, map[string]string, []string, map[string][]string, http.Header, url.Values:
		if r, changed := value(x); changed {
			return slog.AnyValue(r)
		}
		return v
	case json.Number, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return v
	}
	if b, err := json.Marshal(x); err == nil {
		var d any
		if json.Unmarshal(b, &d) == nil {
			if r, changed := value(d); changed {
				return slog.AnyValue(r)
			}
		}
	}
	// The text handler prints with %+v, which can show what JSON does
	// not (unexported fields, String methods).
	if s, changed := redactString(fmt.Sprintf("%+v", x)); changed {
		return slog.StringValue(s)
	}
	return v
}
