package interop

import (
	"context"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// gosdkSession is the official Go SDK's client.
type gosdkSession struct {
	cs       *gomcp.ClientSession
	progress progressRouter
}

// connectGoSDK connects with the SDK's client; version "" leaves the
// offer to the SDK (it probes with server/discover for 2026-07-28 first,
// then falls back to initialize).
func connectGoSDK(ctx context.Context, t gomcp.Transport, version string) (*gosdkSession, error) {
	s := &gosdkSession{}
	c := gomcp.NewClient(&gomcp.Implementation{Name: "interop-gosdk-client", Version: "1.0.0"}, &gomcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *gomcp.ProgressNotificationClientRequest) {
			p := req.Params
			s.progress.deliver(p.ProgressToken, progressEvent{Progress: p.Progress, Total: p.Total, Message: p.Message})
		},
	})
	cs, err := c.Connect(ctx, t, &gomcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	s.cs = cs
	return s, nil
}

func (s *gosdkSession) Negotiated() string { return s.cs.InitializeResult().ProtocolVersion }

func (s *gosdkSession) ServerName() string {
	if si := s.cs.InitializeResult().ServerInfo; si != nil {
		return si.Name
	}
	return ""
}

func (s *gosdkSession) ListTools(ctx context.Context) ([]string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	var names []string
	for tool, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, tool.Name)
	}
	return names, nil
}

func gosdkResult(res *gomcp.CallToolResult) *toolResult {
	out := &toolResult{IsError: res.IsError}
	for _, c := range res.Content {
		if tc, ok := c.(*gomcp.TextContent); ok {
			out.Texts = append(out.Texts, tc.Text)
		}
	}
	return out
}

func (s *gosdkSession) call(ctx context.Context, name string, args map[string]any, onProgress func(progressEvent), settle func()) (*toolResult, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	p := &gomcp.CallToolParams{Name: name, Arguments: args}
	if onProgress != nil {
		tok, remove := s.progress.add(onProgress)
		defer remove()
		if settle != nil {
			defer settle() // runs before remove
		}
		p.SetProgressToken(tok)
	}
	res, err := s.cs.CallTool(ctx, p)
	if err != nil {
		return nil, err
	}
	return gosdkResult(res), nil
}

func (s *gosdkSession) CallTool(ctx context.Context, name string, args map[string]any) (*toolResult, error) {
	return s.call(ctx, name, args, nil, nil)
}

func (s *gosdkSession) CallToolProgress(ctx context.Context, name string, args map[string]any) (*toolResult, []progressEvent, error) {
	var c collect
	res, err := s.call(ctx, name, args, c.add, c.settle)
	return res, c.get(), err
}

func (s *gosdkSession) CancelAtFirstProgress(ctx context.Context, name string, args map[string]any) error {
	return cancelAtFirst(ctx, func(ctx context.Context, onProgress func(progressEvent)) error {
		_, err := s.call(ctx, name, args, onProgress, nil)
		return err
	})
}

func (s *gosdkSession) ReadResource(ctx context.Context, uri string) ([]string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	res, err := s.cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, c := range res.Contents {
		texts = append(texts, c.Text)
	}
	return texts, nil
}

func (s *gosdkSession) GetPrompt(ctx context.Context, name string, args map[string]string) ([]string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	res, err := s.cs.GetPrompt(ctx, &gomcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, m := range res.Messages {
		if tc, ok := m.Content.(*gomcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return texts, nil
}

func (s *gosdkSession) Ping(ctx context.Context) error {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	return s.cs.Ping(ctx, nil)
}

func (s *gosdkSession) Close() error { return s.cs.Close() }
