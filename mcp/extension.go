package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
)

// Extension methods are requests outside the spec's set that a server
// offers to clients that know them (a gateway's tools/discover, say),
// announced under capabilities.experimental. Clients that do not know
// them never send them; to everyone else they behave as any request: the
// same middleware, cancellation, progress and errors, in both eras.

// HandleMethod serves the extension method with h. Methods of the
// protocol and notifications cannot be taken over.
func (s *Server) HandleMethod(method string, h MethodHandler) error {
	switch {
	case method == "" || h == nil:
		return fmt.Errorf("mcp: HandleMethod needs a method name and a handler")
	case strings.HasPrefix(method, "notifications/"):
		return fmt.Errorf("mcp: %s is a notification; extension methods are requests", method)
	case methods[method].handler != nil || removedMethods[method]:
		return fmt.Errorf("mcp: %s is a method of the protocol", method)
	}
	s.extMu.Lock()
	defer s.extMu.Unlock()
	if s.ext == nil {
		s.ext = map[string]MethodHandler{}
	}
	s.ext[method] = h
	return nil
}

func (s *Server) extension(method string) MethodHandler {
	s.extMu.RLock()
	defer s.extMu.RUnlock()
	return s.ext[method]
}

// experimental is what the server declares under
// capabilities.experimental.
func (s *Server) experimental() map[string]json.RawMessage {
	if len(s.opts.Experimental) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(s.opts.Experimental))
	for k, v := range s.opts.Experimental {
		data, err := jsonv2.Marshal(v)
		if err != nil || len(data) == 0 || data[0] != '{' {
			s.logger.Warn("mcp: ServerOptions.Experimental entries must encode as JSON objects; left out", "key", k)
			continue
		}
		out[k] = data
	}
	return out
}

// Call sends an extension method (one the server announced, typically
// under capabilities.experimental) and decodes its result into result,
// which may be nil. Protocol methods have their own calls.
func (cs *ClientSession) Call(ctx context.Context, method string, params, result any) error {
	return cs.call(ctx, method, params, result, callerOptions(ctx))
}

// DecodeParams decodes the request's params into v, answering a bad shape
// with -32602 and a message that says what is wrong. Absent params decode
// as {}.
func (r *Request) DecodeParams(v any) error {
	return unmarshalParams(r.RawParams, v)
}

// Methods returns the request methods the server answers: the
// protocol's and those added with HandleMethod, sorted. A gateway or an
// authorization layer can check that it has decided about each one.
func (s *Server) Methods() []string {
	out := make([]string, 0, len(methods)+len(s.ext))
	for m := range methods {
		out = append(out, m)
	}
	s.extMu.RLock()
	for m := range s.ext {
		out = append(out, m)
	}
	s.extMu.RUnlock()
	slices.Sort(out)
	return out
}
