package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The client's side of 2026-07-28: the era is learnt by probing with
// server/discover; a 2026-07-28 session carries the client's revision,
// capabilities and identity in every request's _meta, and answers
// InputRequiredResult rounds with the same handlers that serve a session-era
// server's requests.

func (cs *ClientSession) isPerRequest() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.perRequest
}

// discover probes the server's era. It reports true when the server speaks
// 2026-07-28 (the session is then ready), false when initialize should
// follow. With pinned set, anything but a per-request answer is an error.
func (cs *ClientSession) discover(ctx context.Context, pinned bool) (bool, error) {
	pctx := ctx
	if !pinned {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, cs.client.opts.ProbeTimeout)
		defer cancel()
	}
	// _meta is added by hand: the session is not per-request yet.
	p, err := cs.metaParams(nil, "", false)
	if err != nil {
		return false, err
	}
	var res struct {
		DiscoverResult
		Meta map[string]jsontext.Value `json:"_meta"`
	}
	err = cs.call(pctx, methodServerDiscover, jsontext.Value(p), &res, callOptions{})
	var ce *CallError
	if errors.As(err, &ce) && ce.Err.Code == CodeUnsupportedProtocolVersion && supportsPerRequest(ce.Err.Data) {
		// Refused, yet our revision is among those listed: a server
		// that changed its mind, or a proxy in the way. Ask once more.
		err = cs.call(pctx, methodServerDiscover, jsontext.Value(p), &res, callOptions{})
	}
	switch {
	case err == nil && len(res.SupportedVersions) > 0:
		if slices.Contains(res.SupportedVersions, Version20260728) {
			var info Implementation
			if raw, ok := res.Meta[MetaServerInfo]; ok {
				unmarshalValue(raw, &info)
			}
			cs.mu.Lock()
			cs.perRequest, cs.rev = true, rev20260728
			cs.init = &InitializeResult{ProtocolVersion: Version20260728, Capabilities: res.Capabilities, ServerInfo: &info, Instructions: res.Instructions}
			cs.mu.Unlock()
			cs.listen()
			return true, nil
		}
		if pinned {
			return false, fmt.Errorf("mcp: the server speaks %v, not %s", res.SupportedVersions, Version20260728)
		}
		return false, nil // a dual-era server whose 2026-07-28 revisions we lack
	case errors.As(err, &ce) && ce.Err.Code == CodeUnsupportedProtocolVersion:
		// Per-request evidence: the server speaks the new era, not our revision
		// of it. Its session-era revisions, if listed, go through initialize.
		var data struct {
			Supported []string `json:"supported"`
		}
		unmarshalValue(ce.Err.Data, &data)
		for _, v := range data.Supported {
			if _, ok := parseRevision(v); ok && !pinned {
				return false, nil
			}
		}
		return false, fmt.Errorf("mcp: the server supports protocol revisions %v, none of which this client speaks (%s, %v)", data.Supported, Version20260728, NegotiatedVersions)
	case pinned:
		return false, fmt.Errorf("mcp: server/discover: %w", err)
	case err != nil && context.Cause(cs.ctx) != nil:
		// The connection itself is gone: a session-era server that exits on
		// any request before initialize. Connect starts it again.
		return false, fmt.Errorf("mcp: %w: %w", ErrProbeClosed, err)
	default:
		// Any other error, or none within the probe timeout: a session-era
		// server, whatever code it used.
		cs.logger.Debug("mcp: server/discover failed; speaking the legacy protocol", "error", err)
		return false, nil
	}
}

// ErrProbeClosed is matched by the error of a Connect whose server ended
// the connection on the server/discover probe (and, reconnected, on
// initialize too): it is either failing or of an older revision that
// cannot take an unknown method, which pinning ClientOptions.ProtocolVersion
// (a gateway's protocolVersion setting) tells apart.
var ErrProbeClosed = errors.New("the server closed the connection on the server/discover probe")

// metaParams returns params (encoded, or nil) with the 2026-07-28 _meta keys
// added, and the progress token when there is one (raw JSON); with tasks,
// the client capabilities declare the tasks extension.
func (cs *ClientSession) metaParams(p []byte, token string, tasks bool) ([]byte, error) {
	members := cs.metaMembers(tasks)
	if token != "" {
		members = append(append(members, `,"progressToken":`...), token...)
	}
	if out, ok := withMeta(p, members); ok {
		return out, nil
	}
	var obj map[string]jsontext.Value
	if len(p) > 0 {
		if err := unmarshalValue(p, &obj); err != nil {
			return nil, err
		}
	}
	if obj == nil {
		obj = map[string]jsontext.Value{}
	}
	// The params carry a _meta of their own: ours go over it.
	meta := map[string]jsontext.Value{}
	if raw, ok := obj["_meta"]; ok {
		if err := unmarshalValue(raw, &meta); err != nil {
			return nil, err
		}
	}
	var ours map[string]jsontext.Value
	if err := unmarshalValue(append(append([]byte{'{'}, members...), '}'), &ours); err != nil {
		return nil, err
	}
	for k, v := range ours {
		meta[k] = v
	}
	m, err := marshal(meta)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = m
	return marshal(obj)
}

// maxInputRounds bounds the InputRequiredResult rounds of one call.
const maxInputRounds = 16

// perRequestResult reads a 2026-07-28 result: complete (or without
// resultType, from an older server), decoded into result, or
// input_required, which is answered with the client's handlers: next is
// then the params p of this round with the answers, for the next round
// (rounds have been answered so far).
func (cs *ClientSession) perRequestResult(ctx context.Context, method string, p []byte, raw jsontext.Value, result any, rounds int) (next []byte, err error) {
	var head struct {
		ResultType    string                   `json:"resultType"`
		InputRequests map[string]*InputRequest `json:"inputRequests"`
		RequestState  *string                  `json:"requestState"`
	}
	if err := unmarshalValue(raw, &head); err != nil {
		return nil, fmt.Errorf("mcp: the server's %s result is malformed: %w", method, err)
	}
	switch head.ResultType {
	case "", "complete":
		return nil, decodeResult(method, raw, result)
	case "input_required":
	case "task":
		if tr, ok := result.(*perRequestTaskResult); ok {
			tr.task = &DetailedTask{}
			if err := unmarshalValue(raw, tr.task); err != nil {
				return nil, fmt.Errorf("mcp: the server's %s task is malformed: %w", method, err)
			}
			return nil, nil
		}
		return nil, fmt.Errorf("mcp: the server answered %s with a task, which this call did not ask for", method)
	default:
		return nil, fmt.Errorf("mcp: the server's %s result has resultType %q, which this client does not know", method, truncateString(head.ResultType, 32))
	}
	if rounds >= maxInputRounds {
		return nil, fmt.Errorf("mcp: %s: the server asked for input %d times; giving up", method, rounds)
	}
	if len(head.InputRequests) == 0 && head.RequestState == nil {
		return nil, fmt.Errorf("mcp: %s: the server's input_required result has neither inputRequests nor requestState", method)
	}
	responses := map[string]any{}
	for key, in := range head.InputRequests {
		r, err := cs.answerInput(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("mcp: %s: answering the server's input request %q: %w", method, key, err)
		}
		responses[key] = r
	}
	// The next round: the same params, the answers, the state echoed as
	// it came. call gives it a new id.
	var obj map[string]jsontext.Value
	if len(p) > 0 {
		if err := unmarshalValue(p, &obj); err != nil {
			return nil, err
		}
	}
	if obj == nil {
		obj = map[string]jsontext.Value{}
	}
	if len(responses) > 0 {
		b, err := marshal(responses)
		if err != nil {
			return nil, err
		}
		obj["inputResponses"] = b
	}
	if head.RequestState != nil {
		b, _ := jsontext.AppendQuote(nil, *head.RequestState)
		obj["requestState"] = b
	}
	return marshal(obj)
}

// answerInput runs the handler for one input request, as it would for the
// same request sent by a session-era server.
func (cs *ClientSession) answerInput(ctx context.Context, in *InputRequest) (any, error) {
	o := cs.client.opts
	raw, _ := marshal(in.Params)
	switch in.Method {
	case methodElicitationCreate:
		if o.ElicitationHandler == nil {
			return nil, fmt.Errorf("%w: elicitation (no ElicitationHandler)", ErrNotSupported)
		}
		var p ElicitParams
		if err := unmarshalValue(raw, &p); err != nil {
			return nil, err
		}
		return o.ElicitationHandler(ctx, cs, &p)
	case methodSamplingCreateMessage:
		if o.CreateMessageHandler == nil {
			return nil, fmt.Errorf("%w: sampling (no CreateMessageHandler)", ErrNotSupported)
		}
		var p CreateMessageParams
		if err := unmarshalValue(raw, &p); err != nil {
			return nil, err
		}
		return o.CreateMessageHandler(ctx, cs, &p)
	case methodRootsList:
		if o.RootsHandler == nil {
			return nil, fmt.Errorf("%w: roots (no RootsHandler)", ErrNotSupported)
		}
		return o.RootsHandler(ctx, cs)
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown input request method %q", truncateString(in.Method, 64))
}

// listen opens subscriptions/listen for the notifications the client has
// handlers for; they arrive like a session-era server's and go to the same
// handlers. The request lives as long as the session.
func (cs *ClientSession) listen() {
	o := cs.client.opts
	var f SubscriptionFilter
	f.ToolsListChanged = o.ToolListChangedHandler != nil
	f.PromptsListChanged = o.PromptListChangedHandler != nil
	f.ResourcesListChanged = o.ResourceListChangedHandler != nil
	if !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged {
		return
	}
	acked := make(chan struct{})
	cs.mu.Lock()
	cs.acked = acked
	cs.mu.Unlock()
	go func() {
		// No RequestTimeout: a subscription has no natural end.
		ctx, cancel := context.WithDeadline(context.WithoutCancel(cs.ctx), farFuture)
		defer cancel()
		go func() {
			select {
			case <-cs.ctx.Done():
				cancel()
			case <-ctx.Done():
			}
		}()
		err := cs.call(ctx, methodSubscriptionsListen, &struct {
			Notifications SubscriptionFilter `json:"notifications"`
		}{f}, nil, callOptions{})
		if cs.ctx.Err() == nil {
			cs.logger.Info("mcp: the server ended the subscription for change notifications", "error", err)
		}
	}()
	// Changes made once Connect returns reach the handlers: wait for the
	// acknowledgement, a short while at most.
	select {
	case <-acked:
	case <-time.After(cs.client.opts.ProbeTimeout):
		cs.logger.Warn("mcp: the server did not acknowledge subscriptions/listen; change notifications may be missed")
	case <-cs.ctx.Done():
	}
}

var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// supportsPerRequest reports whether -32022 data lists our 2026-07-28 revision.
func supportsPerRequest(data []byte) bool {
	var d struct {
		Supported []string `json:"supported"`
	}
	return unmarshalValue(data, &d) == nil && slices.Contains(d.Supported, Version20260728)
}

// metaMembers are the members of a 2026-07-28 request's _meta, encoded
// without braces: the session's fixed ones (encoded once; with tasks,
// its capabilities declare the tasks extension) and its log level. The
// caller may append to the slice it gets.
func (cs *ClientSession) metaMembers(tasks bool) []byte {
	cs.mu.Lock()
	fixed, level := cs.metaFixed, cs.logLevel
	if tasks {
		fixed = cs.metaFixedTasks
	}
	cs.mu.Unlock()
	if fixed == nil {
		caps := cs.client.capabilities()
		if tasks {
			ext := make(map[string]json.RawMessage, len(caps.Extensions)+1)
			for k, v := range caps.Extensions {
				ext[k] = v
			}
			ext[ExtensionTasks] = json.RawMessage("{}")
			caps.Extensions = ext
		}
		c, _ := marshal(caps)
		info, _ := marshal(cs.client.impl)
		b := []byte(`"` + MetaProtocolVersion + `":"` + Version20260728 + `","` + MetaClientCapabilities + `":`)
		b = append(b, c...)
		b = append(b, `,"`+MetaClientInfo+`":`...)
		fixed = append(b, info...)
		cs.mu.Lock()
		if tasks {
			cs.metaFixedTasks = fixed
		} else {
			cs.metaFixed = fixed
		}
		cs.mu.Unlock()
	}
	out := make([]byte, 0, len(fixed)+64)
	out = append(out, fixed...)
	if level != "" {
		out = append(out, `,"`+MetaLogLevel+`":`...)
		out, _ = jsontext.AppendQuote(out, string(level))
	}
	return out
}

// withMeta adds {"_meta":{members}} to params that have no _meta: none,
// null, or an object in which "_meta" appears nowhere (the check is on
// the bytes, so a _meta deeper down sends the call the slow way, which
// merges). ok is false when it cannot.
func withMeta(p, members []byte) (out []byte, ok bool) {
	p = bytes.TrimSpace(p)
	if len(p) == 0 || string(p) == "null" {
		out = make([]byte, 0, len(members)+12)
		out = append(out, `{"_meta":{`...)
		out = append(out, members...)
		return append(out, `}}`...), true
	}
	if p[0] != '{' || bytes.Contains(p, []byte(`"_meta"`)) {
		return nil, false
	}
	rest := bytes.TrimSpace(p[1:])
	out = make([]byte, 0, len(p)+len(members)+13)
	out = append(out, `{"_meta":{`...)
	out = append(out, members...)
	out = append(out, '}')
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...), true
}
