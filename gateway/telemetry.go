package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/internal/redact"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func outcome(res any, err error) []slog.Attr {
	var e *jsonrpc.Error
	switch {
	case errors.As(err, &e):
		return []slog.Attr{slog.String("outcome", "error"), slog.Int64("code", e.Code), slog.String("error", truncate(redact.String(e.Message), 200))}
	case err != nil:
		return []slog.Attr{slog.String("outcome", "error"), slog.String("error", truncate(redact.String(err.Error()), 200))}
	}
	if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
		return []slog.Attr{slog.String("outcome", "tool_error")}
	}
	return []slog.Attr{slog.String("outcome", "ok")}
}

// SanitizeArguments returns a tool call's arguments as the gateway's
// logs and audit log show them (see sanitize), as JSON text: what a
// trace may record of them when an operator opts in
// (otelmcp.Options.RecordArguments, Options.TraceArguments). tool is
// not used: the rules are the same for every tool.
func SanitizeArguments(tool string, raw json.RawMessage) string {
	b, err := json.Marshal(sanitize(raw))
	if err != nil {
		return fmt.Sprintf("[unencodable, %d bytes]", len(raw))
	}
	return string(b)
}

// sanitize returns arguments fit for a log or an audit row: secrets
// redacted by name and by shape (internal/redact), then cut down
// (strings at 200 bytes, nesting at depth 4, lists at 20 items).
// Redaction comes first: a cut secret may no longer look like one.
func sanitize(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return fmt.Sprintf("[malformed, %d bytes]", len(raw))
	}
	return sanitizeValue(redact.Value(v), 0)
}

func sanitizeValue(v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if depth >= 4 {
			return "[…]"
		}
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = sanitizeValue(val, depth+1)
		}
		return out
	case []any:
		if depth >= 4 {
			return "[…]"
		}
		n := min(len(x), 20)
		out := make([]any, 0, n+1)
		for _, e := range x[:n] {
			out = append(out, sanitizeValue(e, depth+1))
		}
		if len(x) > n {
			out = append(out, fmt.Sprintf("…%d more", len(x)-n))
		}
		return out
	case string:
		return truncate(x, 200)
	}
	return v
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut-- // not in the middle of a character
	}
	return s[:cut] + fmt.Sprintf("…(%d bytes)", len(s))
}
