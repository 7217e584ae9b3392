package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func outcome(res any, err error) []slog.Attr {
	var e *jsonrpc.Error
	switch {
	case errors.As(err, &e):
		return []slog.Attr{slog.String("outcome", "error"), slog.Int64("code", e.Code), slog.String("error", truncate(e.Message, 200))}
	case err != nil:
		return []slog.Attr{slog.String("outcome", "error"), slog.String("error", truncate(err.Error(), 200))}
	}
	if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
		return []slog.Attr{slog.String("outcome", "tool_error")}
	}
	return []slog.Attr{slog.String("outcome", "ok")}
}

// secretNames are argument names whose values never reach a log.
var secretNames = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "authorization", "credential", "private_key", "cookie"}

func isSecretName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range secretNames {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// sanitize returns arguments fit for a log: members with secret-looking
// names redacted, strings cut at 200 bytes, nesting cut at depth 4.
func sanitize(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return fmt.Sprintf("[malformed, %d bytes]", len(raw))
	}
	return sanitizeValue(v, 0)
}

func sanitizeValue(v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if depth >= 4 {
			return "[…]"
		}
		out := make(map[string]any, len(x))
		for k, val := range x {
			if isSecretName(k) {
				out[k] = "[redacted]"
			} else {
				out[k] = sanitizeValue(val, depth+1)
			}
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
	return s[:n] + fmt.Sprintf("…(%d bytes)", len(s))
}
