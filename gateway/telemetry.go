package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// requestLog emits one structured event per request: method, id, tool
// and upstream, principal, duration and outcome, with the arguments of a
// tool call sanitized (secret-looking members redacted, long values cut).
func (g *Gateway) requestLog(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, req *mcp.Request) (any, error) {
		t0 := time.Now()
		// The params of a tool call are decoded once, for the limiter,
		// the log and the audit record alike; sanitized only for those
		// that keep them.
		var call toolCall
		var via bool
		if req.Method == "tools/call" {
			call, via = calledTool(req.RawParams)
			ctx = context.WithValue(ctx, toolCallKey{}, call.Name)
		}
		res, err := next(ctx, req)
		if req.IsNotification() {
			return res, err
		}
		took := time.Since(t0)
		principal := mcp.PrincipalFrom(ctx)
		logging := g.logger.Enabled(ctx, slog.LevelInfo)
		var attrs []slog.Attr
		if logging {
			attrs = []slog.Attr{
				slog.String("method", req.Method),
				slog.String("id", req.ID.String()),
				slog.String("principal", principal),
				slog.String("protocol", req.ProtocolVersion()),
				slog.Duration("duration", took),
			}
		}
		var args any
		tool, upstream := "", ""
		if req.Method == "tools/call" {
			if logging || g.audit != nil {
				args = sanitize(json.RawMessage(call.Arguments))
			}
			tool = "unknown" // a bounded label for names we do not publish
			if u := g.owner(call.Name); u != nil {
				tool, upstream = call.Name, u.cfg.Name
			}
			if logging {
				if via {
					attrs = append(attrs, slog.String("via", MetaCallTool))
				}
				attrs = append(attrs, slog.String("tool", call.Name), slog.Any("arguments", args))
				if upstream != "" {
					attrs = append(attrs, slog.String("upstream", upstream))
				}
			}
		}
		oc := outcome(res, err)
		if req.NeedsInput() {
			// A round of a call, not a failure: the client answers and
			// calls again.
			oc = []slog.Attr{slog.String("outcome", "input_required")}
		}
		attrs = append(attrs, oc...)
		var rpcErr *jsonrpc.Error
		errors.As(err, &rpcErr)
		g.metrics.observe(req.Method, tool, upstream, oc[0].Value.String(), took)
		if g.metrics != nil && rpcErr != nil && rpcErr.Code == CodeRateLimited {
			g.metrics.rateLimited.WithLabelValues(tool).Inc()
		}
		if g.audit != nil && req.Method == "tools/call" {
			rec := AuditRecord{Time: t0, Principal: principal, Tool: call.Name, Upstream: upstream,
				Outcome: oc[0].Value.String(), Duration: took}
			if args != nil {
				if b, err := json.Marshal(args); err == nil {
					rec.Arguments = string(b)
				}
			}
			if rpcErr != nil {
				rec.Code = rpcErr.Code
			}
			g.audit.Record(rec)
		}
		if upstream != "" && err == nil && oc[0].Value.String() == "ok" {
			g.coCalls.called(g.search, callerKey(ctx, req), call.Name, t0)
		}
		if logging {
			g.logger.LogAttrs(ctx, slog.LevelInfo, "gateway: request", attrs...)
		}
		return res, err
	}
}

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
