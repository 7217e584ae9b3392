package mcp

import (
	"context"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The server's requests to the client (ping, sampling, elicitation,
// roots), answered with the ClientOptions handlers, each on a goroutine
// of its own and within MaxServerRequests.

// maxRefusing bounds the refusals being written to a server at once.
const maxRefusing = 64

// refuse answers a server's request with an error, off the reading
// goroutine: a server that floods requests without reading its input
// would otherwise block the client's reading on the write of a refusal,
// and with it the answers the client waits for (each side waiting for the
// other to read). Past maxRefusing writes in progress, refusals are
// dropped: such a server is not reading them.
func (cs *ClientSession) refuse(id jsonrpc.ID, e *jsonrpc.Error) {
	if cs.refusing.Add(1) > maxRefusing {
		cs.refusing.Add(-1)
		cs.logger.Warn("mcp: dropped the refusal of a server's request: the server is not reading what the client writes", "id", truncateString(id.String(), 64))
		return
	}
	go func() {
		defer cs.refusing.Add(-1)
		cs.write(context.Background(), jsonrpc.AppendError(nil, id, e))
	}()
}

// handleRequest answers a server-to-client request with the handler the
// application supplied, or -32601 when it supplied none.
func (cs *ClientSession) handleRequest(msg *jsonrpc.Message) {
	opts := &cs.client.opts
	var h func(ctx context.Context) (any, error)
	switch msg.Method {
	case methodPing:
		h = func(context.Context) (any, error) { return emptyResult{}, nil }
	case methodSamplingCreateMessage:
		if opts.CreateMessageHandler != nil {
			h = func(ctx context.Context) (any, error) {
				var p CreateMessageParams
				if err := unmarshalParams(msg.Params, &p); err != nil {
					return nil, err
				}
				return opts.CreateMessageHandler(ctx, cs, &p)
			}
		}
	case methodElicitationCreate:
		if opts.ElicitationHandler != nil {
			h = func(ctx context.Context) (any, error) {
				var p ElicitParams
				if err := unmarshalParams(msg.Params, &p); err != nil {
					return nil, err
				}
				if p.Mode == "url" && !opts.ElicitationURL {
					return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: this client did not declare URL-mode elicitation")
				}
				return opts.ElicitationHandler(ctx, cs, &p)
			}
		}
	case methodRootsList:
		if opts.RootsHandler != nil {
			h = func(ctx context.Context) (any, error) { return opts.RootsHandler(ctx, cs) }
		}
	}
	if h == nil {
		cs.refuse(msg.ID, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: this client does not handle %q", truncateString(msg.Method, 64)))
		return
	}
	ctx, cancel := context.WithCancel(cs.ctx)
	// Counted until the answer is written, not only while the handler
	// runs: answers to a server that does not read would otherwise pile
	// up, a goroutine each.
	if cs.serving.Add(1) > int32(opts.MaxServerRequests) {
		cs.serving.Add(-1)
		cancel()
		cs.refuse(msg.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError,
			"Internal error: this client already handles %d of your requests, the most it allows at once; send %s again when one has been answered", opts.MaxServerRequests, truncateString(msg.Method, 64)))
		return
	}
	cs.mu.Lock()
	cs.inbound[msg.ID] = cancel
	cs.mu.Unlock()
	go func() {
		defer cs.serving.Add(-1)
		defer cancel()
		res, err := func() (res any, err error) {
			defer func() {
				if v := recover(); v != nil {
					cs.logger.Error("mcp: a client handler panicked", "method", msg.Method, "panic", v, "stack", stack())
					err = jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the client's %s handler failed", msg.Method)
				}
			}()
			return h(ctx)
		}()
		cs.mu.Lock()
		delete(cs.inbound, msg.ID)
		cs.mu.Unlock()
		if ctx.Err() != nil && cs.ctx.Err() == nil {
			return // cancelled by the server: no response
		}
		cs.write(context.Background(), encodeResponse(msg.ID, res, err, cs.logger))
	}()
}
