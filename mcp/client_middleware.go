package mcp

import (
	"context"
	"encoding/json"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Client middleware: the outgoing twin of the server's Middleware, so
// that instrumentation (a span per request, trace context in _meta) can
// wrap every request a client sends without the mcp package knowing
// about it.

// ClientRequest is one outgoing request as client middleware sees it.
type ClientRequest struct {
	// Method is the JSON-RPC method.
	Method string
	// ID is the request's id on the wire.
	ID jsonrpc.ID
	// Params are the params as the caller gave them (nil when absent),
	// before the session adds its own _meta members (a progress token,
	// the 2026-07-28 request fields). Middleware may replace them, or
	// add members to their _meta with SetMeta.
	Params json.RawMessage
	// Session is the session the request is sent on.
	Session *ClientSession

	pc    *pendingCall
	token string
	o     *callOptions
	gen   uint64
}

// SetMeta sets params._meta[key] to value encoded as JSON, replacing a
// member of that name, and creating _meta (and the params) when absent.
func (r *ClientRequest) SetMeta(key string, value any) error {
	v, err := marshal(value)
	if err != nil {
		return err
	}
	p, err := setMetaMember(r.Params, key, v)
	if err != nil {
		return err
	}
	r.Params = p
	return nil
}

// ClientHandler sends one request and waits for its answer: the raw
// result, a *CallError with the server's JSON-RPC error, or why there is
// none.
type ClientHandler func(ctx context.Context, req *ClientRequest) (json.RawMessage, error)

// ClientMiddleware wraps a ClientHandler. It sees every request the
// client sends, each on the wire once: initialize and the
// server/discover probe, a request sent again after the server forgot
// the session, and each round of a request the server asked input for.
// Notifications do not pass through it.
type ClientMiddleware func(ClientHandler) ClientHandler

// chainClient wraps h in mw, the first outermost.
func chainClient(h ClientHandler, mw []ClientMiddleware) ClientHandler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// setMetaMember sets params._meta[key] to the encoded value v.
func setMetaMember(p []byte, key string, v []byte) ([]byte, error) {
	name, err := jsontext.AppendQuote(nil, key)
	if err != nil {
		return nil, err
	}
	if out, ok := withMeta(p, append(append(name, ':'), v...)); ok {
		return out, nil
	}
	var obj map[string]jsontext.Value
	if len(p) > 0 {
		if err := unmarshalValue(p, &obj); err != nil {
			return nil, err
		}
	}
	if obj == nil {
		obj = map[string]jsontext.Value{}
	}
	var meta map[string]jsontext.Value
	if raw, ok := obj["_meta"]; ok && unmarshalValue(raw, &meta) != nil {
		// A _meta that is not an object carries nothing to keep.
		meta = nil
	}
	if meta == nil {
		meta = map[string]jsontext.Value{}
	}
	meta[key] = jsontext.Value(v)
	m, err := marshal(meta)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = m
	return marshal(obj)
}
