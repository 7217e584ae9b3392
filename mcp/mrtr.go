package mcp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Multi-round-trip requests. A handler that needs the client (a user's
// answer, a model's completion, the roots) asks through one API in both
// eras. In a 2026-07-28 request the handler returns at once, the client gets
// an InputRequiredResult, and it calls again with the answers; the
// handler then runs again from the start and finds them. In a session-era
// session the engine sends the server-to-client requests itself and runs
// the handler again with the answers, so the client sees one call.
//
// Handlers therefore must be safe to run more than once per call: do
// side effects after the inputs are in.

// InputRequest is one thing a handler needs from the client.
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params,omitempty"`
}

// ElicitInput asks the client's user to fill a form (or visit a URL).
func ElicitInput(p *ElicitParams) *InputRequest {
	return &InputRequest{Method: methodElicitationCreate, Params: p}
}

// SamplingInput asks the client to sample its model.
func SamplingInput(p *CreateMessageParams) *InputRequest {
	return &InputRequest{Method: methodSamplingCreateMessage, Params: p}
}

// RootsInput asks the client for its roots.
func RootsInput() *InputRequest {
	return &InputRequest{Method: methodRootsList, Params: struct{}{}}
}

// InputRequiredError is what Request.RequireInput returns: the handler
// returns it (or any error) and the engine asks the client.
type InputRequiredError struct {
	Requests map[string]*InputRequest
	State    []byte
}

func (e *InputRequiredError) Error() string {
	keys := make([]string, 0, len(e.Requests))
	for k := range e.Requests {
		keys = append(keys, k)
	}
	return "mcp: input required from the client: " + strings.Join(keys, ", ")
}

// errInputRequired is returned by Elicit, CreateMessage and ListRoots in a
// 2026-07-28 request whose answer is not in yet.
var errInputRequired = errors.New("mcp: input required from the client; return this error so that the client can answer and call again")

// RequireInput asks the client for inputs, keyed by names unique within
// the call, and returns the error the handler must return. state comes
// back from State when the client calls again: it travels through the
// client signed, so it cannot be forged, but it can be read, so keep
// secrets out of it.
func (r *Request) RequireInput(reqs map[string]*InputRequest, state []byte) error {
	e := &InputRequiredError{Requests: reqs, State: state}
	r.needInput = e
	return e
}

// NeedsInput reports whether the handler, in this run, asked the client
// for input it did not have (RequireInput, or Elicit, CreateMessage or
// ListRoots): middleware then sees the error the handler returned (a
// tool's turned into an isError result), but the client gets
// input_required, or in a session the requests themselves.
func (r *Request) NeedsInput() bool { return r.needInput != nil }

// InputResponse returns the client's answer to the input request key,
// given in this round or an earlier one, as raw JSON.
func (r *Request) InputResponse(key string) (json.RawMessage, bool) {
	v, ok := r.inputs[key]
	return json.RawMessage(v), ok
}

// InputAs decodes the client's answer to the input request key.
func InputAs[T any](r *Request, key string) (*T, bool) {
	raw, ok := r.InputResponse(key)
	if !ok {
		return nil, false
	}
	var v T
	if unmarshalValue(raw, &v) != nil {
		return nil, false
	}
	return &v, true
}

// State returns the state the handler gave RequireInput in the previous
// round, nil in the first.
func (r *Request) State() []byte { return r.state }

// autoInput is how Elicit, CreateMessage and ListRoots work in a per-request
// request: the n-th call in the handler has the key "mcpgate/n", so that
// a handler run again finds its earlier answers in order.
func autoInput[T any](r *Request, in *InputRequest) (*T, error) {
	if err := r.checkInputCaps(in); err != nil {
		r.missingCap = err
		return nil, err
	}
	r.autoN++
	key := fmt.Sprintf("mcpgate/%d", r.autoN)
	if v, ok := InputAs[T](r, key); ok {
		return v, nil
	}
	if r.needInput == nil {
		r.needInput = &InputRequiredError{Requests: map[string]*InputRequest{}, State: r.state}
	}
	r.needInput.Requests[key] = in
	return nil, errInputRequired
}

// CheckInput reports whether the client of the request declared the
// capability that in needs: nil, or an error wrapping
// ErrCapabilityNotSupported. Elicit, CreateMessage and ListRoots check
// for themselves; code that passes on another server's input request
// (a proxy) asks first, so that it need not hold that server's call for
// a question this client cannot answer.
func (r *Request) CheckInput(in *InputRequest) error {
	if err := r.checkInputCaps(in); err != nil {
		if err.Code != CodeMissingRequiredClientCapability {
			return err
		}
		return fmt.Errorf("%w: %s", ErrCapabilityNotSupported, err.Message)
	}
	return nil
}

// checkInputCaps answers -32021 when the client of a request did not
// declare what in needs.
func (r *Request) checkInputCaps(in *InputRequest) *jsonrpc.Error {
	caps := r.ClientCapabilities()
	var need map[string]any
	switch in.Method {
	case methodElicitationCreate:
		p, _ := in.Params.(*ElicitParams)
		switch {
		case caps.Elicitation == nil:
			need = map[string]any{"elicitation": map[string]any{}}
		case p != nil && p.Mode == "url" && !caps.Elicitation.url():
			need = map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}
		case (p == nil || p.Mode != "url") && !caps.Elicitation.form():
			need = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
		}
	case methodSamplingCreateMessage:
		p, _ := in.Params.(*CreateMessageParams)
		switch {
		case caps.Sampling == nil:
			need = map[string]any{"sampling": map[string]any{}}
		case p != nil && (len(p.Tools) > 0 || p.ToolChoice != nil) && caps.Sampling.Tools == nil:
			need = map[string]any{"sampling": map[string]any{"tools": map[string]any{}}}
		}
	case methodRootsList:
		if caps.Roots == nil {
			need = map[string]any{"roots": map[string]any{}}
		}
	default:
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the server asked the client for %q, which is not an input request", in.Method)
	}
	if need == nil {
		return nil
	}
	return jsonrpc.Errorf(CodeMissingRequiredClientCapability, "Missing required client capability: this request needs the client capability %s, which its _meta does not declare", capName(need)).
		WithData(map[string]any{"requiredCapabilities": need})
}

func capName(need map[string]any) string {
	for k, v := range need {
		if m, ok := v.(map[string]any); ok {
			for k2 := range m {
				return k + "." + k2
			}
		}
		return k
	}
	return ""
}

// inputMethods may answer input_required.
var inputMethods = map[string]bool{methodToolsCall: true, methodPromptsGet: true, methodResourcesRead: true}

// requestState is what the signed requestState carries.
type requestState struct {
	Principal string                    `json:"p,omitempty"`
	Method    string                    `json:"m"`
	Digest    string                    `json:"d"`
	Expires   int64                     `json:"e"`
	Inputs    map[string]jsontext.Value `json:"i,omitempty"`
	State     []byte                    `json:"s,omitempty"`
}

// stateKey signs request states: ServerOptions.StateKey, else the key
// given to ShareStateKey, else a random key per Server (then a state is
// good only for the process that made it).
func (s *Server) stateKey() []byte {
	s.stateKeyOnce.Do(func() {
		if len(s.opts.StateKey) > 0 {
			s.stateKeyVal = s.opts.StateKey
			return
		}
		s.mu.Lock()
		shared := s.sharedStateKey
		s.mu.Unlock()
		if len(shared) > 0 {
			s.stateKeyVal = shared
			return
		}
		s.stateKeyVal = make([]byte, 32)
		rand.Read(s.stateKeyVal)
	})
	return s.stateKeyVal
}

// ShareStateKey gives the server the key that signs the request states of
// 2026-07-28 input requests where ServerOptions.StateKey sets none, so
// that a state one replica of the server issued is good at the others.
// A transport that shares sessions among replicas calls it before
// serving (mcphttp does, with Options.Cluster); later calls change
// nothing.
func (s *Server) ShareStateKey(key []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sharedStateKey == nil {
		s.sharedStateKey = slices.Clone(key)
	}
}

func (s *Server) stateTTL() time.Duration {
	if s.opts.StateTTL > 0 {
		return s.opts.StateTTL
	}
	return 10 * time.Minute
}

// paramsDigest identifies the call a state belongs to: its params without
// the members that change between rounds.
func paramsDigest(params []byte) string {
	var m map[string]jsontext.Value
	if jsonv2.Unmarshal(params, &m) != nil {
		return ""
	}
	delete(m, "_meta")
	delete(m, "inputResponses")
	delete(m, "requestState")
	b, _ := jsonv2.Marshal(m, jsonv2.Deterministic(true))
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

func (s *Server) sealState(st *requestState) string {
	payload, _ := jsonv2.Marshal(st, jsonv2.Deterministic(true))
	mac := hmac.New(sha256.New, s.stateKey())
	mac.Write(payload)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (s *Server) openState(token string) (*requestState, bool) {
	p, m, ok := strings.Cut(token, ".")
	if !ok {
		return nil, false
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	sum, err2 := base64.RawURLEncoding.DecodeString(m)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	mac := hmac.New(sha256.New, s.stateKey())
	mac.Write(payload)
	if !hmac.Equal(sum, mac.Sum(nil)) {
		return nil, false
	}
	var st requestState
	if jsonv2.Unmarshal(payload, &st) != nil {
		return nil, false
	}
	return &st, true
}

// loadInputs reads inputResponses and requestState of a per-request retry into
// the request, refusing a state that was not ours, has expired or belongs
// to another call.
func (s *Server) loadInputs(req *Request) *jsonrpc.Error {
	if !bytes.Contains(req.RawParams, []byte(`"inputResponses"`)) && !bytes.Contains(req.RawParams, []byte(`"requestState"`)) {
		return nil // a first round
	}
	var p struct {
		InputResponses jsontext.Value `json:"inputResponses"`
		RequestState   *string        `json:"requestState"`
	}
	if jsonv2.Unmarshal(req.RawParams, &p) != nil {
		return nil // the handler's own decoding says what is wrong
	}
	inputs := map[string]jsontext.Value{}
	if p.RequestState != nil {
		st, ok := s.openState(*p.RequestState)
		switch {
		case !ok:
			return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: requestState failed its integrity check; send it back exactly as the server gave it, or call again without it")
		case time.Now().Unix() > st.Expires:
			return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: requestState has expired; call again without it")
		case st.Principal != req.principal:
			return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: requestState was issued to another caller; call again without it")
		case st.Method != req.Method || st.Digest != paramsDigest(req.RawParams):
			return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: requestState belongs to another request; send it only with the call it came from")
		}
		for k, v := range st.Inputs {
			inputs[k] = v
		}
		req.state = st.State
	}
	if len(p.InputResponses) > 0 && string(p.InputResponses) != "null" {
		var in map[string]jsontext.Value
		if p.InputResponses[0] != '{' || jsonv2.Unmarshal(p.InputResponses, &in) != nil {
			return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: inputResponses must be an object mapping each input request's key to its result")
		}
		for k, v := range in {
			if len(v) == 0 || v[0] != '{' {
				return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: inputResponses[%q] must be a result object", truncateString(k, 64))
			}
			inputs[k] = v
		}
	}
	req.inputs = inputs
	return nil
}

// encodeInputRequired answers a 2026-07-28 request whose handler needs input.
func (s *Server) encodeInputRequired(req *Request) []byte {
	if !inputMethods[req.Method] {
		return jsonrpc.AppendError(nil, req.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the server asked for client input while handling %s, which cannot take it", req.Method))
	}
	for _, in := range req.needInput.Requests {
		if err := req.checkInputCaps(in); err != nil {
			return jsonrpc.AppendError(nil, req.ID, err)
		}
	}
	reqs, err := marshal(req.needInput.Requests)
	if err != nil {
		return jsonrpc.AppendError(nil, req.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the server could not encode its input requests"))
	}
	st := s.sealState(&requestState{
		Principal: req.principal,
		Method:    req.Method,
		Digest:    paramsDigest(req.RawParams),
		Expires:   time.Now().Add(s.stateTTL()).Unix(),
		Inputs:    req.inputs,
		State:     req.needInput.State,
	})
	b := []byte(`{"resultType":"input_required","inputRequests":`)
	b = append(b, reqs...)
	b = append(b, `,"requestState":`...)
	b, _ = jsontext.AppendQuote(b, st)
	b = append(b, '}')
	return jsonrpc.AppendResult(nil, req.ID, b)
}

// maxSessionEraRounds bounds the rounds of input a session-era call may take.
const maxSessionEraRounds = 8

// fulfilSessionEra answers a session-era handler's RequireInput with real
// server-to-client requests and runs it again, round after round.
func (ss *ServerSession) fulfilSessionEra(ctx context.Context, req *Request, res any, err error) (any, error) {
	for round := 0; req.needInput != nil; round++ {
		if round == maxSessionEraRounds {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the handler of %s asked for input %d times; giving up", req.Method, maxSessionEraRounds)
		}
		need := req.needInput
		req.needInput = nil
		answers, ferr := ss.fulfilInputs(ctx, need.Requests)
		if ferr != nil {
			return nil, ferr
		}
		if req.inputs == nil {
			req.inputs = map[string]jsontext.Value{}
		}
		for k, v := range answers {
			req.inputs[k] = v
		}
		req.state = need.State
		res, err = ss.server.call(ctx, req)
	}
	return res, err
}

// fulfilInputs asks a session-era client for each input with a real
// server-to-client request.
func (ss *ServerSession) fulfilInputs(ctx context.Context, reqs map[string]*InputRequest) (map[string]jsontext.Value, error) {
	answers := make(map[string]jsontext.Value, len(reqs))
	for key, in := range reqs {
		var out any
		var err error
		switch in.Method {
		case methodElicitationCreate:
			p, _ := in.Params.(*ElicitParams)
			out, err = ss.Elicit(ctx, p)
		case methodSamplingCreateMessage:
			p, _ := in.Params.(*CreateMessageParams)
			out, err = ss.CreateMessage(ctx, p)
		case methodRootsList:
			out, err = ss.ListRoots(ctx)
		default:
			err = fmt.Errorf("mcp: %q is not an input request", in.Method)
		}
		if err != nil {
			return nil, err
		}
		b, err := marshal(out)
		if err != nil {
			return nil, err
		}
		answers[key] = b
	}
	return answers, nil
}

type principalKey struct{}

// WithPrincipal records in ctx who is calling (an authenticated user or
// client), so that what the server hands out to be brought back, such as
// a requestState, is good only for that caller. Transports that
// authenticate set it; the empty principal is anonymous.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// PrincipalFrom returns the principal recorded by WithPrincipal.
func PrincipalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}
