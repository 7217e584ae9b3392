package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Prompt describes a prompt template.
type Prompt struct {
	Name        string            `json:"name"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Arguments   []*PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon            `json:"icons,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// PromptArgument describes one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitzero"`
}

// GetPromptParams are the params of prompts/get.
type GetPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	Meta      Meta              `json:"_meta,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

func (m *PromptMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role    Role           `json:"role"`
		Content jsontext.Value `json:"content"`
	}
	if err := json.Unmarshal(b, &w, jsontext.AllowInvalidUTF8(true)); err != nil {
		return err
	}
	c, err := decodeContent(w.Content)
	if err != nil {
		return err
	}
	*m = PromptMessage{Role: w.Role, Content: c}
	return nil
}

// GetPromptResult is the result of prompts/get.
type GetPromptResult struct {
	Description string           `json:"description,omitempty"`
	Messages    []*PromptMessage `json:"messages"`
	Meta        Meta             `json:"_meta,omitempty"`
}

// ListPromptsResult is the result of prompts/list.
type ListPromptsResult struct {
	Prompts    []*Prompt `json:"prompts"`
	NextCursor string    `json:"nextCursor,omitempty"`
}

// PromptHandler renders a prompt. Required arguments have been checked
// before it runs.
type PromptHandler func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error)

// GetPromptRequest is a prompts/get request with its decoded params.
type GetPromptRequest struct {
	*Request
	Params *GetPromptParams
}

type serverPrompt struct {
	prompt  *Prompt
	handler PromptHandler
}

// AddPrompt registers a prompt. A prompt with the same name is replaced.
func (s *Server) AddPrompt(p *Prompt, h PromptHandler) error {
	if p == nil || h == nil || p.Name == "" {
		return errors.New("mcp: AddPrompt needs a prompt with a name, and a handler")
	}
	s.prompts.update([]*serverPrompt{{prompt: p, handler: h}}, nil)
	s.changed(notificationPromptsListChanged)
	return nil
}

// UpdatePrompts removes the named prompts and adds others with handler h,
// as one change: one list_changed, one rebuild of the registry, however
// many prompts (see UpdateTools). An invalid prompt fails the whole
// update, and nothing changes.
func (s *Server) UpdatePrompts(remove []string, add []*Prompt, h PromptHandler) error {
	sps := make([]*serverPrompt, 0, len(add))
	for _, p := range add {
		if p == nil || h == nil || p.Name == "" {
			return errors.New("mcp: UpdatePrompts needs prompts with a name, and a handler")
		}
		sps = append(sps, &serverPrompt{prompt: p, handler: h})
	}
	if s.prompts.update(sps, remove) {
		s.changed(notificationPromptsListChanged)
	}
	return nil
}

// RemovePrompts unregisters prompts by name.
func (s *Server) RemovePrompts(names ...string) {
	if s.prompts.update(nil, names) {
		s.changed(notificationPromptsListChanged)
	}
}

func (s *Server) listPrompts(ctx context.Context, req *Request) (any, error) {
	var p PaginatedParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	items, next, err := s.prompts.page(p.Cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	if s.opts.Filter != nil {
		items = slices.DeleteFunc(slices.Clone(items), func(sp *serverPrompt) bool { return !s.visible(ctx, KindPrompt, sp.prompt.Name) })
	}
	res := &ListPromptsResult{Prompts: make([]*Prompt, len(items)), NextCursor: next}
	for i, sp := range items {
		c := *sp.prompt
		if !req.rev.titles() {
			c.Title = ""
			args := make([]*PromptArgument, len(c.Arguments))
			for j, a := range c.Arguments {
				ac := *a
				ac.Title = ""
				args[j] = &ac
			}
			c.Arguments = args
		}
		if !req.rev.icons() {
			c.Icons = nil
		}
		res.Prompts[i] = &c
	}
	return res, nil
}

func (s *Server) getPrompt(ctx context.Context, req *Request) (any, error) {
	var p GetPromptParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	sp, ok := s.prompts.get(p.Name)
	if !ok || !s.visible(ctx, KindPrompt, p.Name) {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: unknown prompt %q; call prompts/list to see the available prompts", truncateString(p.Name, 128))
	}
	var missing []string
	for _, a := range sp.prompt.Arguments {
		if _, ok := p.Arguments[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: prompt %q is missing the required argument(s) %s", p.Name, strings.Join(missing, ", "))
	}
	res, err := sp.handler(ctx, &GetPromptRequest{Request: req, Params: &p})
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("prompt %q produced no result", p.Name)
	}
	changed := false
	msgs := make([]*PromptMessage, len(res.Messages))
	for i, m := range res.Messages {
		blocks, ch := contentForRevision(req.rev, []Content{m.Content})
		msgs[i] = m
		if ch {
			msgs[i] = &PromptMessage{Role: m.Role, Content: blocks[0]}
			changed = true
		}
	}
	if changed {
		c := *res
		c.Messages = msgs
		res = &c
	}
	return res, nil
}
