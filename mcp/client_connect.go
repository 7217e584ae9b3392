package mcp

import (
	"context"
	"errors"
	"fmt"
)

// Connecting: which era a server speaks (a server/discover probe, or
// what the Client remembers of it), then the handshake of that era, and
// a fresh handshake when an HTTP server forgets the session.

// Connect opens a connection with t and runs the initialize handshake
// (none with a bare tool server: see ClientOptions.Bare).
// The session lasts until Close, the server ending the connection, or a
// fatal transport error; ctx bounds only the handshake.
func (c *Client) Connect(ctx context.Context, t Transport) (*ClientSession, error) {
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cs := newClientSession(c, conn)
	if c.opts.Bare == BareAlways {
		cs.becomeBare(false)
		return cs, nil
	}
	key := ""
	if k, ok := t.(ServerKeyer); ok {
		key = k.ServerKey()
	}
	_, knownSessionEra := c.sessionEra.Load(key)
	if c.probe && key != "" && knownSessionEra {
		// Known to be session-era: straight to initialize; should it fail, the
		// next connection probes again.
		if err := cs.handshake(ctx); err != nil {
			if !errors.Is(err, ErrConnectionClosed) {
				// Not a session-era server after all: probe it next time. One
				// that died is still taken for session-era, so that retrying
				// a failing server starts it once, not twice.
				c.sessionEra.Delete(key)
			}
			cs.Close()
			return nil, err
		}
		return cs, nil
	}
	if c.probe || c.opts.ProtocolVersion == Version20260728 {
		perRequest, err := cs.discover(ctx, !c.probe)
		if errors.Is(err, ErrProbeClosed) {
			// Session-era, and gone: a fresh connection (a new process, for
			// a command) goes straight to initialize.
			cs.Close()
			if key != "" {
				c.sessionEra.Store(key, true)
			}
			if c.opts.OneConnectionPerConnect && key != "" {
				// The caller retries: its next Connect initializes at once.
				return nil, fmt.Errorf("%w (the next connection will ask it initialize first): %w", ErrProbeClosed, err)
			}
			if conn, err = t.Connect(ctx); err != nil {
				return nil, fmt.Errorf("mcp: reconnecting after the server closed the connection on the server/discover probe: %w", err)
			}
			cs = newClientSession(c, conn)
			if err := cs.handshake(ctx); err != nil {
				cs.Close()
				return nil, fmt.Errorf("%w; before that, %w, so it may speak only older revisions: pinning the revision (%s) asks it initialize first", err, ErrProbeClosed, LatestNegotiatedVersion)
			}
			return cs, nil
		}
		if err != nil {
			cs.Close()
			return nil, err
		}
		if perRequest {
			return cs, nil
		}
		if key != "" {
			c.sessionEra.Store(key, true)
		}
	}
	if err := cs.handshake(ctx); err != nil {
		cs.Close()
		return nil, err
	}
	return cs, nil
}

// initialize runs the handshake: initialize, a check of the revision the
// server chose, then notifications/initialized.
func (cs *ClientSession) initialize(ctx context.Context) error {
	c := cs.client
	p := &InitializeParams{ProtocolVersion: c.opts.ProtocolVersion, Capabilities: c.capabilities(), ClientInfo: *c.impl}
	var res InitializeResult
	if err := cs.call(ctx, methodInitialize, p, &res, callOptions{}); err != nil {
		return err // it names initialize already
	}
	rev, ok := parseRevision(res.ProtocolVersion)
	if !ok {
		return fmt.Errorf("mcp: the server chose protocol revision %q, which this client does not speak (it speaks %v)", res.ProtocolVersion, NegotiatedVersions)
	}
	if res.ServerInfo == nil {
		cs.logger.Warn("mcp: the server's initialize result lacks serverInfo")
		res.ServerInfo = &Implementation{}
	}
	cs.mu.Lock()
	cs.init, cs.rev = &res, rev
	cs.mu.Unlock()
	if vs, ok := cs.conn.(ProtocolVersionSetter); ok {
		vs.SetProtocolVersion(res.ProtocolVersion)
	}
	return cs.notify(ctx, notificationInitialized, nil)
}

// reinitialize starts a fresh session after the server forgot ours (an
// HTTP 404), once for every call that noticed in the same generation.
func (cs *ClientSession) reinitialize(ctx context.Context, gen uint64) error {
	cs.reinitMu.Lock()
	defer cs.reinitMu.Unlock()
	cs.mu.Lock()
	cur := cs.gen
	cs.mu.Unlock()
	if cur != gen {
		return nil // another call already did it
	}
	cs.logger.Info("mcp: the server ended the session; starting a new one")
	if err := cs.initialize(ctx); err != nil {
		return err
	}
	cs.mu.Lock()
	cs.gen++
	cs.mu.Unlock()
	return nil
}
