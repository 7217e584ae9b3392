package mcp

import (
	"context"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Method and notification names.
const (
	methodInitialize             = "initialize"
	methodPing                   = "ping"
	methodToolsList              = "tools/list"
	methodToolsCall              = "tools/call"
	methodResourcesList          = "resources/list"
	methodResourceTemplatesList  = "resources/templates/list"
	methodResourcesRead          = "resources/read"
	methodResourcesSubscribe     = "resources/subscribe"
	methodResourcesUnsubscribe   = "resources/unsubscribe"
	methodPromptsList            = "prompts/list"
	methodPromptsGet             = "prompts/get"
	methodCompletionComplete     = "completion/complete"
	methodLoggingSetLevel        = "logging/setLevel"
	methodSamplingCreateMessage  = "sampling/createMessage"
	methodElicitationCreate      = "elicitation/create"
	methodRootsList              = "roots/list"
	notificationInitialized      = "notifications/initialized"
	notificationCancelled        = "notifications/cancelled"
	notificationProgress         = "notifications/progress"
	notificationMessage          = "notifications/message"
	notificationRootsListChanged = "notifications/roots/list_changed"

	notificationToolsListChanged     = "notifications/tools/list_changed"
	notificationPromptsListChanged   = "notifications/prompts/list_changed"
	notificationResourcesListChanged = "notifications/resources/list_changed"
	notificationResourceUpdated      = "notifications/resources/updated"
	notificationElicitationComplete  = "notifications/elicitation/complete"
)

type feature uint8

const (
	featureNone feature = iota
	featureTools
	featureResources
	featurePrompts
	featureLogging
	featureCompletions
	featureSubscribe
	featureTasks
)

type methodSpec struct {
	need    feature
	handler func(s *Server, ctx context.Context, req *Request) (any, error)
}

// methods maps each inbound request method to its handler and the
// capability it needs; a method whose capability was not declared to the
// session answers -32601, as if it did not exist.
var methods map[string]methodSpec

func init() {
	methods = map[string]methodSpec{
		methodInitialize:            {featureNone, func(s *Server, ctx context.Context, req *Request) (any, error) { return req.Session.initialize(req) }},
		methodPing:                  {featureNone, func(*Server, context.Context, *Request) (any, error) { return emptyResult{}, nil }},
		methodToolsList:             {featureTools, (*Server).listTools},
		methodToolsCall:             {featureTools, (*Server).callTool},
		methodResourcesList:         {featureResources, (*Server).listResources},
		methodResourceTemplatesList: {featureResources, (*Server).listResourceTemplates},
		methodResourcesRead:         {featureResources, (*Server).readResource},
		methodResourcesSubscribe:    {featureSubscribe, (*Server).subscribe},
		methodResourcesUnsubscribe:  {featureSubscribe, (*Server).unsubscribe},
		methodPromptsList:           {featurePrompts, (*Server).listPrompts},
		methodPromptsGet:            {featurePrompts, (*Server).getPrompt},
		methodCompletionComplete:    {featureCompletions, (*Server).complete},
		methodLoggingSetLevel:       {featureLogging, (*Server).setLevel},
		methodServerDiscover:        {featureNone, (*Server).discover},
		methodSubscriptionsListen:   {featureNone, (*Server).listen},
		methodTasksGet:              {featureTasks, (*Server).tasksGet},
		methodTasksCancel:           {featureTasks, (*Server).tasksCancel},
		methodTasksResult:           {featureTasks, (*Server).tasksResult},
		methodTasksList:             {featureTasks, (*Server).tasksList},
		methodTasksUpdate:           {featureTasks, (*Server).tasksUpdate},
	}
}

// dispatch is the innermost MethodHandler: it routes a request to the
// feature that serves it.
func (s *Server) dispatch(ctx context.Context, req *Request) (any, error) {
	if req.IsNotification() {
		s.handleNotification(ctx, req)
		return nil, nil
	}
	spec, ok := methods[req.Method]
	if !ok {
		if h := s.extension(req.Method); h != nil {
			return h(ctx, req)
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %q is not a method of this server", truncateString(req.Method, 64))
	}
	if spec.need != featureNone && !req.declared(spec.need) {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s is not available because this server does not declare the %s capability", req.Method, spec.need)
	}
	return spec.handler(s, ctx, req)
}

func (f feature) String() string {
	switch f {
	case featureTools:
		return "tools"
	case featureResources:
		return "resources"
	case featurePrompts:
		return "prompts"
	case featureLogging:
		return "logging"
	case featureCompletions:
		return "completions"
	case featureSubscribe:
		return "resources.subscribe"
	case featureTasks:
		return "tasks"
	}
	return "none"
}

// declared reports whether the client was told about feature f: by
// initialize in a session, by the server's capabilities for a
// 2026-07-28 request.
func (r *Request) declared(f feature) bool {
	if r.perRequest != nil {
		return capsDeclare(r.Session.server.capabilities(rev20260728), f, r.Session.server)
	}
	ss := r.Session
	ss.mu.Lock()
	caps := ss.caps
	ss.mu.Unlock()
	if f == featureCompletions && r.rev < rev20250326 {
		// 2024-11-05 had completion/complete without a capability.
		return ss.server.opts.CompletionHandler != nil
	}
	return capsDeclare(caps, f, ss.server)
}

func capsDeclare(caps ServerCapabilities, f feature, s *Server) bool {
	switch f {
	case featureTools:
		return caps.Tools != nil
	case featureResources:
		return caps.Resources != nil
	case featureSubscribe:
		return caps.Resources != nil && caps.Resources.Subscribe
	case featurePrompts:
		return caps.Prompts != nil
	case featureLogging:
		return caps.Logging != nil
	case featureCompletions:
		return s.opts.CompletionHandler != nil && caps.Completions != nil
	case featureTasks:
		return caps.Tasks != nil || caps.Extensions[ExtensionTasks] != nil
	}
	return true
}

// promote ends ss's initialization, reporting whether it was initializing.
func (s *Server) promote(ss *ServerSession) bool {
	if !ss.state.CompareAndSwap(int32(stateInitializing), int32(stateOperating)) {
		return false
	}
	if h := s.opts.InitializedHandler; h != nil {
		go h(ss.ctx, ss)
	}
	return true
}

func (s *Server) handleNotification(ctx context.Context, req *Request) {
	ss := req.Session
	switch req.Method {
	case notificationInitialized:
		if !s.promote(ss) {
			ss.logger.Debug("mcp: ignored notifications/initialized outside initialization")
		}
	case notificationCancelled:
		var p CancelledNotificationParams
		if unmarshalParams(req.RawParams, &p) != nil {
			ss.logger.Debug("mcp: ignored a malformed cancellation")
			return
		}
		ss.cancelRequest(p.RequestID, p.Reason)
	case notificationRootsListChanged:
		if h := s.opts.RootsListChangedHandler; h != nil {
			go h(ss.ctx, ss)
		}
	default:
		// Unknown notifications are ignored, as the spec asks.
	}
}

// initialize negotiates the revision and declares the capabilities.
func (ss *ServerSession) initialize(req *Request) (any, error) {
	var p InitializeParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: protocolVersion is required; send the newest revision you support, such as %q", LatestNegotiatedVersion)
	}
	rev, ok := parseRevision(p.ProtocolVersion)
	if !ok {
		// An unsupported request is answered with our newest revision;
		// the client decides whether it can use it.
		rev, _ = parseRevision(LatestNegotiatedVersion)
	}
	s := ss.server
	caps := s.capabilities(rev)
	ss.mu.Lock()
	if sessionState(ss.state.Load()) != stateCreated {
		ss.mu.Unlock()
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "Invalid Request: the session is already initialized; initialize may be sent only once")
	}
	ss.rev, ss.params, ss.caps = rev, &p, caps
	ss.state.Store(int32(stateInitializing))
	ss.mu.Unlock()
	ss.logger.Debug("mcp: session initialized", "client", p.ClientInfo.Name, "clientVersion", p.ClientInfo.Version, "protocol", rev.String())
	return &InitializeResult{
		ProtocolVersion: rev.String(),
		Capabilities:    caps,
		ServerInfo:      s.impl.forRevision(rev),
		Instructions:    s.opts.Instructions,
	}, nil
}
