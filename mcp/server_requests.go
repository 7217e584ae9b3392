package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"encoding/json"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// ErrCapabilityNotSupported is returned by a server-to-client request the
// client did not declare support for.
var ErrCapabilityNotSupported = errors.New("mcp: the client does not support this request")

// CreateMessageParams are the params of sampling/createMessage.
type CreateMessageParams struct {
	Messages         []*SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences  `json:"modelPreferences,omitzero"`
	SystemPrompt     string             `json:"systemPrompt,omitempty"`
	IncludeContext   string             `json:"includeContext,omitempty"`
	Temperature      *float64           `json:"temperature,omitzero"`
	MaxTokens        int64              `json:"maxTokens"`
	StopSequences    []string           `json:"stopSequences,omitempty"`
	Metadata         any                `json:"metadata,omitzero"`
	Tools            []*Tool            `json:"tools,omitempty"`
	ToolChoice       *ToolChoice        `json:"toolChoice,omitzero"`
	Meta             Meta               `json:"_meta,omitempty"`
}

// SamplingMessage is one message of a sampling conversation. Content holds
// one block or, from 2025-11-25, several.
type SamplingMessage struct {
	Role    Role            `json:"role"`
	Content json.RawMessage `json:"content"`
	Meta    Meta            `json:"_meta,omitempty"`
}

// NewSamplingMessage returns a message of one content block.
func NewSamplingMessage(role Role, c Content) *SamplingMessage {
	b, _ := marshal(c)
	return &SamplingMessage{Role: role, Content: b}
}

// ModelPreferences are the server's hints for choosing a model.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitzero"`
	SpeedPriority        *float64    `json:"speedPriority,omitzero"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitzero"`
}

// ModelHint names a model or model family.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// ToolChoice says whether the sampled model may or must use tools.
type ToolChoice struct {
	Mode string `json:"mode,omitempty"` // auto, required or none
}

// CreateMessageResult is the client's sampled message.
type CreateMessageResult struct {
	Role       Role            `json:"role"`
	Content    json.RawMessage `json:"content"`
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason,omitempty"`
	Meta       Meta            `json:"_meta,omitempty"`
}

// ElicitParams are the params of elicitation/create. Mode is "form" (the
// default; RequestedSchema describes the fields) or "url" (URL and
// ElicitationID; 2025-11-25 clients that declared it).
type ElicitParams struct {
	Mode            string `json:"mode,omitempty"`
	Message         string `json:"message"`
	RequestedSchema any    `json:"requestedSchema,omitzero"`
	URL             string `json:"url,omitempty"`
	ElicitationID   string `json:"elicitationId,omitempty"`
	Meta            Meta   `json:"_meta,omitempty"`
}

// ElicitResult is the user's answer: Action is accept, decline or cancel.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// Root is a directory or file the client lets the server work in.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ListRootsResult is the result of roots/list.
type ListRootsResult struct {
	Roots []*Root `json:"roots"`
	Meta  Meta    `json:"_meta,omitempty"`
}

// CreateMessage asks the client to sample a model. Called with a
// handler's context, the request travels on that request's stream.
func (ss *ServerSession) CreateMessage(ctx context.Context, p *CreateMessageParams) (*CreateMessageResult, error) {
	caps := ss.clientCaps()
	if caps.Sampling == nil {
		return nil, fmt.Errorf("%w: sampling/createMessage (the client did not declare sampling)", ErrCapabilityNotSupported)
	}
	if (len(p.Tools) > 0 || p.ToolChoice != nil) && caps.Sampling.Tools == nil {
		return nil, fmt.Errorf("%w: sampling with tools (the client did not declare sampling.tools)", ErrCapabilityNotSupported)
	}
	var res CreateMessageResult
	if err := ss.call(ctx, methodSamplingCreateMessage, p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Elicit asks the client's user for input.
func (ss *ServerSession) Elicit(ctx context.Context, p *ElicitParams) (*ElicitResult, error) {
	caps := ss.clientCaps()
	rev := ss.revision()
	if caps.Elicitation == nil || !rev.elicitation() {
		return nil, fmt.Errorf("%w: elicitation/create (the client did not declare elicitation)", ErrCapabilityNotSupported)
	}
	c := *p
	switch c.Mode {
	case "url":
		if !caps.Elicitation.url() || !rev.urlElicitation() {
			return nil, fmt.Errorf("%w: URL-mode elicitation (the client did not declare elicitation.url)", ErrCapabilityNotSupported)
		}
	case "", "form":
		if !caps.Elicitation.form() {
			return nil, fmt.Errorf("%w: form-mode elicitation (the client declared only URL mode)", ErrCapabilityNotSupported)
		}
		if !rev.urlElicitation() {
			c.Mode = "" // the field is unknown before 2025-11-25
		}
	default:
		return nil, fmt.Errorf("mcp: unknown elicitation mode %q", c.Mode)
	}
	var res ElicitResult
	if err := ss.call(ctx, methodElicitationCreate, &c, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ListRoots asks the client for its roots.
func (ss *ServerSession) ListRoots(ctx context.Context) (*ListRootsResult, error) {
	if ss.clientCaps().Roots == nil {
		return nil, fmt.Errorf("%w: roots/list (the client did not declare roots)", ErrCapabilityNotSupported)
	}
	var res ListRootsResult
	if err := ss.call(ctx, methodRootsList, nil, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// NotifyElicitationComplete tells the client that the URL-mode
// elicitation it started has finished, so it can retry what was waiting on
// it. It is sent only to 2025-11-25 clients that declared URL mode.
func (ss *ServerSession) NotifyElicitationComplete(elicitationID string) error {
	if !ss.revision().urlElicitation() || !ss.clientCaps().Elicitation.url() {
		return fmt.Errorf("%w: notifications/elicitation/complete (the client did not declare elicitation.url)", ErrCapabilityNotSupported)
	}
	return ss.notify(ss.out, notificationElicitationComplete, map[string]string{"elicitationId": elicitationID})
}

// Ping checks that the client answers.
func (ss *ServerSession) Ping(ctx context.Context) error {
	return ss.call(ctx, methodPing, nil, nil)
}

// CreateMessage asks the client to sample a model on behalf of this request.
func (r *Request) CreateMessage(ctx context.Context, p *CreateMessageParams) (*CreateMessageResult, error) {
	if r.perRequest != nil {
		return autoInput[CreateMessageResult](r, SamplingInput(p))
	}
	return r.Session.CreateMessage(r.bind(ctx), p)
}

// Elicit asks the client's user for input on behalf of this request.
func (r *Request) Elicit(ctx context.Context, p *ElicitParams) (*ElicitResult, error) {
	if r.perRequest != nil {
		return autoInput[ElicitResult](r, ElicitInput(p))
	}
	return r.Session.Elicit(r.bind(ctx), p)
}

// ListRoots asks the client for its roots on behalf of this request.
func (r *Request) ListRoots(ctx context.Context) (*ListRootsResult, error) {
	if r.perRequest != nil {
		return autoInput[ListRootsResult](r, RootsInput())
	}
	return r.Session.ListRoots(r.bind(ctx))
}

func (r *Request) bind(ctx context.Context) context.Context {
	if requestFrom(ctx) == r {
		return ctx
	}
	return context.WithValue(ctx, requestKey{}, r)
}

// call sends a request to the client and waits for its response, until
// ctx ends, the timeout passes or the session closes. On a timeout or
// cancellation the client is told with notifications/cancelled.
func (ss *ServerSession) call(ctx context.Context, method string, params, result any) error {
	if st := sessionState(ss.state.Load()); st != stateOperating {
		if st == stateClosed {
			return ErrSessionClosed
		}
		return fmt.Errorf("mcp: cannot send %s before the client has sent notifications/initialized", method)
	}
	w := ss.out
	if r := requestFrom(ctx); r != nil && r.Session == ss && !r.done.Load() {
		w = r.w // keep it with the request that needs it
	}
	if t := taskFrom(ctx); t != nil && !t.perRequest {
		// A task's handler waiting on the client: input_required.
		ss.server.clientAsk(t, 1)
		defer ss.server.clientAsk(t, -1)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, ss.server.opts.ClientRequestTimeout)
		defer cancel()
	}
	var p []byte
	if params != nil {
		var err error
		if p, err = marshal(params); err != nil {
			return err
		}
	}
	ch := make(chan *jsonrpc.Message, 1)
	ss.mu.Lock()
	ss.nextID++
	id := jsonrpc.IntID(ss.nextID)
	if ss.idPrefix != "" {
		id = jsonrpc.StringID(ss.idPrefix + strconv.FormatInt(ss.nextID, 10))
	}
	ss.pending[id] = ch
	ss.mu.Unlock()
	forget := func() {
		ss.mu.Lock()
		delete(ss.pending, id)
		ss.mu.Unlock()
	}
	if err := w.WriteMessage(jsonrpc.AppendRequest(nil, id, method, p)); err != nil {
		forget()
		return fmt.Errorf("mcp: sending %s: %w", method, err)
	}
	select {
	case msg := <-ch:
		if msg.Error != nil {
			return msg.Error
		}
		if result == nil {
			return nil
		}
		if err := unmarshalValue(msg.Result, result); err != nil {
			return fmt.Errorf("mcp: the client's %s result is malformed: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		forget()
		reason := "the request was cancelled"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = "the request timed out"
		}
		ss.notify(w, notificationCancelled, &CancelledNotificationParams{RequestID: id.Raw(), Reason: reason})
		return fmt.Errorf("mcp: %s: %w", method, ctx.Err())
	case <-ss.ctx.Done():
		forget()
		return ErrSessionClosed
	}
}
