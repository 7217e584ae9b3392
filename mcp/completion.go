package mcp

import (
	"context"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// CompleteParams are the params of completion/complete.
type CompleteParams struct {
	Ref      *CompleteReference `json:"ref"`
	Argument CompleteArgument   `json:"argument"`
	Context  *CompleteContext   `json:"context,omitzero"`
	Meta     Meta               `json:"_meta,omitempty"`
}

// CompleteReference names what is being completed: a prompt
// ("ref/prompt", Name) or a resource template ("ref/resource", URI).
type CompleteReference struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteArgument is the argument being completed and what was typed.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext carries arguments already resolved.
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteResult is the result of completion/complete.
type CompleteResult struct {
	Completion CompletionValues `json:"completion"`
	Meta       Meta             `json:"_meta,omitempty"`
}

// CompletionValues are the suggestions, best first; at most 100 are sent.
type CompletionValues struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitzero"`
	HasMore bool     `json:"hasMore,omitzero"`
}

// CompleteRequest is a completion/complete request with its params.
type CompleteRequest struct {
	*Request
	Params *CompleteParams
}

const maxCompletionValues = 100

func (s *Server) complete(ctx context.Context, req *Request) (any, error) {
	var p CompleteParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	if p.Ref == nil || (p.Ref.Type != "ref/prompt" && p.Ref.Type != "ref/resource") {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, `Invalid params: ref must be {"type":"ref/prompt","name":...} or {"type":"ref/resource","uri":...}`)
	}
	if p.Ref.Type == "ref/prompt" {
		if _, ok := s.prompts.get(p.Ref.Name); !ok || !s.visible(ctx, KindPrompt, p.Ref.Name) {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: unknown prompt %q", truncateString(p.Ref.Name, 128))
		}
	}
	res, err := s.opts.CompletionHandler(ctx, &CompleteRequest{Request: req, Params: &p})
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &CompleteResult{}
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	if n := len(res.Completion.Values); n > maxCompletionValues {
		// The spec caps a reply at 100 values.
		c := *res
		c.Completion.Values = res.Completion.Values[:maxCompletionValues]
		c.Completion.HasMore = true
		if c.Completion.Total < n {
			c.Completion.Total = n
		}
		res = &c
	}
	return res, nil
}
