package gateway

import (
	"context"
	"errors"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// What an upstream asks of the client (sampling, elicitation, roots) is
// asked of the downstream client whose call it is serving, on that call's
// stream, and the answer goes back upstream; the ids of each hop are the
// hop's own. A 2026-07-28 downstream client cannot be asked in the middle
// of a call (its input arrives with a new call), so such requests are
// refused upstream with an error saying why.

func (u *upstream) relayTarget(ctx context.Context, method string) (*mcp.Request, error) {
	r := u.downstream(ctx)
	if r == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "mcpgate: %s outside any call has no client to go to", method)
	}
	if r.ProtocolVersion() == mcp.ModernVersion {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "mcpgate: the client of this call speaks 2026-07-28 and cannot answer %s in the middle of a call through the gateway", method)
	}
	return r, nil
}

func (u *upstream) relaySampling(ctx context.Context, _ *mcp.ClientSession, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	r, err := u.relayTarget(ctx, "sampling/createMessage")
	if err != nil {
		return nil, err
	}
	return r.CreateMessage(ctx, p)
}

func (u *upstream) relayElicitation(ctx context.Context, _ *mcp.ClientSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	r, err := u.relayTarget(ctx, "elicitation/create")
	if err != nil {
		return nil, err
	}
	return r.Elicit(ctx, p)
}

func (u *upstream) relayRoots(ctx context.Context, _ *mcp.ClientSession) (*mcp.ListRootsResult, error) {
	if u.downstream(ctx) == nil {
		// Asked outside any call (servers ask right after initialize):
		// no client's roots apply, so none.
		return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
	}
	r, err := u.relayTarget(ctx, "roots/list")
	if err != nil {
		return nil, err
	}
	res, err := r.ListRoots(ctx)
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
		r.Log(p.Level, logger, p.Data)
		return
	}
	for _, ss := range u.g.server.Sessions() {
		ss.Log(ctx, p.Level, logger, p.Data)
	}
}
