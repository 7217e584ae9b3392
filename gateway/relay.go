package gateway

import (
	"context"
	"errors"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// What an upstream asks of the client (sampling, elicitation, roots) is
// asked of the downstream client whose call it is serving, and the answer
// goes back upstream; the ids of each hop are the hop's own. A legacy
// client is sent a real request on that call's stream. A 2026-07-28
// client cannot be asked in the middle of a request: its tool call,
// prompts/get or resources/read is parked and answered with
// input_required, and its next request brings the answer
// (relay_modern.go). Its other requests (completion) cannot take input,
// so what their upstream asks is refused with an error saying why.

// relayTarget finds the downstream request to ask: a legacy one, or the
// parked call of a 2026-07-28 one (c).
func (u *upstream) relayTarget(ctx context.Context, method string) (r *mcp.Request, c *relayCall, err error) {
	r = u.downstream(ctx)
	if r == nil {
		return nil, nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "mcpgate: %s outside any call has no client to go to", method)
	}
	if r.ProtocolVersion() == mcp.ModernVersion {
		if c = u.g.relays.byRequest(r); c == nil {
			return nil, nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "mcpgate: the client of this request speaks 2026-07-28, and only its tools/call, prompts/get and resources/read can wait through the gateway for its answer to %s", method)
		}
	}
	return r, c, nil
}

func (u *upstream) relaySampling(ctx context.Context, _ *mcp.ClientSession, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	r, c, err := u.relayTarget(ctx, "sampling/createMessage")
	if err != nil {
		return nil, err
	}
	if c != nil {
		return askModern[mcp.CreateMessageResult](ctx, r, c, mcp.SamplingInput(p))
	}
	return r.CreateMessage(ctx, p)
}

func (u *upstream) relayElicitation(ctx context.Context, _ *mcp.ClientSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	r, c, err := u.relayTarget(ctx, "elicitation/create")
	if err != nil {
		return nil, err
	}
	if c != nil {
		return askModern[mcp.ElicitResult](ctx, r, c, mcp.ElicitInput(p))
	}
	return r.Elicit(ctx, p)
}

func (u *upstream) relayRoots(ctx context.Context, _ *mcp.ClientSession) (*mcp.ListRootsResult, error) {
	if u.downstream(ctx) == nil {
		// Asked outside any call (servers ask right after initialize):
		// no client's roots apply, so none.
		return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
	}
	r, c, err := u.relayTarget(ctx, "roots/list")
	if err != nil {
		return nil, err
	}
	var res *mcp.ListRootsResult
	if c != nil {
		res, err = askModern[mcp.ListRootsResult](ctx, r, c, mcp.RootsInput())
	} else {
		res, err = r.ListRoots(ctx)
	}
	if errors.Is(err, mcp.ErrCapabilityNotSupported) {
		// A client without roots has none to share.
		return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
	}
	return res, err
}

// relayLog passes an upstream's log message to the client of the call in
// flight, or to every session when none is (each session's level applies).
func (u *upstream) relayLog(ctx context.Context, _ *mcp.ClientSession, p *mcp.LoggingMessageParams) {
	logger := u.cfg.Name
	if p.Logger != "" {
		logger += "/" + p.Logger
	}
	if r := u.downstream(ctx); r != nil {
		if c := u.g.relays.byRequest(r); c != nil {
			// A 2026-07-28 client's call: its request of the moment,
			// none while it is parked.
			if r = c.current(); r == nil {
				return
			}
		}
		r.Log(p.Level, logger, p.Data)
		return
	}
	for _, ss := range u.g.server.Sessions() {
		ss.Log(ctx, p.Level, logger, p.Data)
	}
}
