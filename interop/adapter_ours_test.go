package interop

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// oursSession is mcpgate's client (package mcp).
type oursSession struct {
	cs *mcp.ClientSession
}

// connectOurs connects our client over tr, offering version ("" for the
// client's default, the newest revision).
func connectOurs(ctx context.Context, t *testing.T, tr mcp.Transport, version string) (*oursSession, error) {
	if version == "default" {
		version = "" // both eras: probe, then 2026-07-28 or initialize
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "interop-mcpgate-client", Version: "1.0.0"}, &mcp.ClientOptions{
		ProtocolVersion: version,
		Logger:          testLogger(t),
	})
	cs, err := c.Connect(ctx, tr)
	if err != nil {
		return nil, err
	}
	return &oursSession{cs: cs}, nil
}

func (s *oursSession) Negotiated() string { return s.cs.ProtocolVersion() }

// PingMethod: at 2026-07-28, which has no ping, our client's Ping sends
// server/discover.
func (s *oursSession) PingMethod() string {
	if s.cs.ProtocolVersion() == perRequestRevision {
		return "server/discover"
	}
	return "ping"
}

func (s *oursSession) ServerName() string {
	if r := s.cs.InitializeResult(); r != nil && r.ServerInfo != nil {
		return r.ServerInfo.Name
	}
	return ""
}

func (s *oursSession) ListTools(ctx context.Context) ([]string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	var names []string
	for tool, err := range s.cs.Tools(ctx) {
		if err != nil {
			return nil, err
		}
		names = append(names, tool.Name)
	}
	return names, nil
}

func oursTexts(content []mcp.Content) []string {
	var texts []string
	for _, c := range content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return texts
}

func (s *oursSession) call(ctx context.Context, name string, args map[string]any, onProgress func(progressEvent)) (*toolResult, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	if onProgress != nil {
		ctx = mcp.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
			onProgress(progressEvent{Progress: p.Progress, Total: p.Total, Message: p.Message})
		})
	}
	res, err := s.cs.CallTool(ctx, name, args)
	if err != nil {
		return nil, err
	}
	return &toolResult{Texts: oursTexts(res.Content), IsError: res.IsError}, nil
}

func (s *oursSession) CallTool(ctx context.Context, name string, args map[string]any) (*toolResult, error) {
	return s.call(ctx, name, args, nil)
}

func (s *oursSession) CallToolProgress(ctx context.Context, name string, args map[string]any) (*toolResult, []progressEvent, error) {
	var c collect
	res, err := s.call(ctx, name, args, c.add)
	return res, c.get(), err
}

func (s *oursSession) CancelAtFirstProgress(ctx context.Context, name string, args map[string]any) error {
	return cancelAtFirst(ctx, func(ctx context.Context, onProgress func(progressEvent)) error {
		_, err := s.call(ctx, name, args, onProgress)
		return err
	})
}

func (s *oursSession) ReadResource(ctx context.Context, uri string) ([]string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	res, err := s.cs.ReadResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, c := range res.Contents {
		if c.Blob != nil {
			return nil, fmt.Errorf("resource %s is binary", c.URI)
		}
		texts = append(texts, c.Text)
	}
	return texts, nil
}

func (s *oursSession) GetPrompt(ctx context.Context, name string, args map[string]string) ([]string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	res, err := s.cs.GetPrompt(ctx, name, args)
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, m := range res.Messages {
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return texts, nil
}

func (s *oursSession) Ping(ctx context.Context) error {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	return s.cs.Ping(ctx)
}

func (s *oursSession) Close() error { return s.cs.Close() }
