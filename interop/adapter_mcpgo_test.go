package interop

import (
	"context"
	"fmt"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// mcpgoSession is mark3labs/mcp-go's client.
type mcpgoSession struct {
	c          *mcpclient.Client
	negotiated string
	server     string
	progress   progressRouter
}

// connectMCPGo starts tr and initializes; version "" leaves the offer to
// mcp-go (a server/discover probe for 2026-07-28, then initialize).
func connectMCPGo(ctx context.Context, tr transport.Interface, version string) (*mcpgoSession, error) {
	s := &mcpgoSession{c: mcpclient.NewClient(tr)}
	if err := s.c.Start(ctx); err != nil {
		return nil, err
	}
	s.c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != "notifications/progress" {
			return
		}
		f := n.Params.AdditionalFields
		num := func(k string) float64 { v, _ := f[k].(float64); return v }
		msg, _ := f["message"].(string)
		s.progress.deliver(f["progressToken"], progressEvent{Progress: num("progress"), Total: num("total"), Message: msg})
	})
	res, err := s.c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: version,
		ClientInfo:      mcp.Implementation{Name: "interop-mcpgo-client", Version: "1.0.0"},
	}})
	if err != nil {
		s.c.Close()
		return nil, err
	}
	s.negotiated, s.server = res.ProtocolVersion, res.ServerInfo.Name
	return s, nil
}

func (s *mcpgoSession) Negotiated() string { return s.negotiated }
func (s *mcpgoSession) ServerName() string { return s.server }

// PingMethod: at 2026-07-28 mcp-go's Ping returns at once and sends
// nothing, so there is nothing to check.
func (s *mcpgoSession) PingMethod() string {
	if s.negotiated == perRequestRevision {
		return ""
	}
	return "ping"
}

func (s *mcpgoSession) ListTools(ctx context.Context) ([]string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	res, err := s.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	return names, nil
}

func mcpgoTexts(content []mcp.Content) []string {
	var texts []string
	for _, c := range content {
		if tc, ok := mcp.AsTextContent(c); ok {
			texts = append(texts, tc.Text)
		}
	}
	return texts
}

func (s *mcpgoSession) call(ctx context.Context, name string, args map[string]any, onProgress func(progressEvent), settle func()) (*toolResult, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = name, args
	if onProgress != nil {
		tok, remove := s.progress.add(onProgress)
		defer remove()
		if settle != nil {
			defer settle() // runs before remove
		}
		req.Params.Meta = &mcp.Meta{ProgressToken: tok}
	}
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	return &toolResult{Texts: mcpgoTexts(res.Content), IsError: res.IsError}, nil
}

func (s *mcpgoSession) CallTool(ctx context.Context, name string, args map[string]any) (*toolResult, error) {
	return s.call(ctx, name, args, nil, nil)
}

func (s *mcpgoSession) CallToolProgress(ctx context.Context, name string, args map[string]any) (*toolResult, []progressEvent, error) {
	var c collect
	res, err := s.call(ctx, name, args, c.add, c.settle)
	return res, c.get(), err
}

func (s *mcpgoSession) CancelAtFirstProgress(ctx context.Context, name string, args map[string]any) error {
	return cancelAtFirst(ctx, func(ctx context.Context, onProgress func(progressEvent)) error {
		_, err := s.call(ctx, name, args, onProgress, nil)
		return err
	})
}

func (s *mcpgoSession) ReadResource(ctx context.Context, uri string) ([]string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	var req mcp.ReadResourceRequest
	req.Params.URI = uri
	res, err := s.c.ReadResource(ctx, req)
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, c := range res.Contents {
		if tc, ok := mcp.AsTextResourceContents(c); ok {
			texts = append(texts, tc.Text)
		} else {
			return nil, fmt.Errorf("resource content %T is not text", c)
		}
	}
	return texts, nil
}

func (s *mcpgoSession) GetPrompt(ctx context.Context, name string, args map[string]string) ([]string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	var req mcp.GetPromptRequest
	req.Params.Name, req.Params.Arguments = name, args
	res, err := s.c.GetPrompt(ctx, req)
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, m := range res.Messages {
		if tc, ok := mcp.AsTextContent(m.Content); ok {
			texts = append(texts, tc.Text)
		}
	}
	return texts, nil
}

func (s *mcpgoSession) Ping(ctx context.Context) error {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	return s.c.Ping(ctx)
}

func (s *mcpgoSession) Close() error { return s.c.Close() }
