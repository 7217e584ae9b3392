package mcp

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/internal/httpmeta"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The 2026-07-28 revision ("per-request") has no initialize and no session:
// every request names its revision, the client's capabilities and identity
// in params._meta. A message is per-request when its _meta claims a revision
// (even an initialize); everything else is served as before ("session era").
// One Server and one ServerSession serve both eras, message by message.

// Keys of the per-request _meta of the 2026-07-28 revision.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Error codes defined by the 2026-07-28 revision.
const (
	CodeHeaderMismatch                  = -32020
	CodeMissingRequiredClientCapability = -32021
	CodeUnsupportedProtocolVersion      = -32022
)

const methodServerDiscover = "server/discover"

// removedMethods exist only in the session-era era: a 2026-07-28 request for one
// gets -32601, as for any method the server does not implement.
var removedMethods = map[string]bool{
	methodInitialize:           true,
	methodPing:                 true,
	methodLoggingSetLevel:      true,
	methodResourcesSubscribe:   true,
	methodResourcesUnsubscribe: true,
	methodTasksResult:          true, // the tasks extension inlines results in tasks/get
	methodTasksList:            true,
}

// cacheableMethods carry ttlMs and cacheScope on their 2026-07-28 results.
var cacheableMethods = map[string]bool{
	methodServerDiscover:        true,
	methodToolsList:             true,
	methodPromptsList:           true,
	methodResourcesList:         true,
	methodResourceTemplatesList: true,
	methodResourcesRead:         true,
}

// perRequestRequest is what a 2026-07-28 request says about its client.
type perRequestRequest struct {
	version    string
	caps       ClientCapabilities
	clientInfo Implementation
	logLevel   LoggingLevel // "" when the request wants no logs
}

// perRequestClaim reports whether params claim a protocol revision in
// _meta, which makes the message per-request whatever its method. The HTTP
// transport routes by the same test.
func perRequestClaim(params []byte) bool { return httpmeta.PerRequestClaim(params) }

// httpView is the server as its HTTP transport sees it before it runs a
// 2026-07-28 request (see internal/httpmeta): mcp exports none of it.
type httpView struct{ s *Server }

// offerView hands out to a session's writer that asks for it (the HTTP
// transport's) the server's httpView.
func (s *Server) offerView(out MessageWriter) {
	if t, ok := out.(httpmeta.ServerTaker); ok {
		t.TakeServer(httpView{s})
	}
}

// CheckPerRequest validates a 2026-07-28 request before it runs, as the
// engine does again when it runs it.
func (v httpView) CheckPerRequest(method string, params []byte) *jsonrpc.Error {
	_, err := v.s.parsePerRequest(method, params)
	return err
}

// ParamHeaders returns the x-mcp-header annotations of a tool's input
// schema, reachable from the root through properties only; nil when the
// tool is unknown or has none.
func (v httpView) ParamHeaders(tool string) []httpmeta.ParamHeader {
	st, ok := v.s.tools.get(tool)
	if !ok {
		return nil
	}
	return st.paramHeaders
}

// metaCache remembers the 2026-07-28 requests parsed from the _meta texts
// seen last, so that a client's every request does not decode the same
// capabilities again. Entries are shared and never changed, as a session-era
// session's InitializeParams are shared by its requests.
type metaCache struct {
	mu sync.RWMutex
	m  map[string]*perRequestRequest
}

// metaCacheSize bounds the cache; when it is full it starts over.
const metaCacheSize = 256

// metaCacheMaxLen is the longest _meta text kept.
const metaCacheMaxLen = 4 << 10

func (c *metaCache) get(raw []byte) *perRequestRequest {
	c.mu.RLock()
	m := c.m[string(raw)]
	c.mu.RUnlock()
	return m
}

func (c *metaCache) put(raw []byte, m *perRequestRequest) {
	if len(raw) > metaCacheMaxLen {
		return
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= metaCacheSize {
		c.m = make(map[string]*perRequestRequest)
	}
	c.m[string(raw)] = m
	c.mu.Unlock()
}

func (s *Server) parsePerRequest(method string, params []byte) (*perRequestRequest, *jsonrpc.Error) {
	raw := findMember(params, "_meta")
	if m := s.metaCache.get(raw); m != nil {
		if err := s.perRequestMethod(method); err != nil {
			return nil, err
		}
		return m, nil
	}
	m, err := parseMeta(raw)
	if err != nil {
		return nil, err
	}
	s.metaCache.put(raw, m)
	if err := s.perRequestMethod(method); err != nil {
		return nil, err
	}
	return m, nil
}

// parseMeta reads what a 2026-07-28 request's _meta says about its client.
func parseMeta(raw []byte) (*perRequestRequest, *jsonrpc.Error) {
	// Only _meta is read here, member by member: the rest of the params
	// belongs to the method's handler.
	var meta struct {
		Version jsontext.Value `json:"io.modelcontextprotocol/protocolVersion"`
		Caps    jsontext.Value `json:"io.modelcontextprotocol/clientCapabilities"`
		Info    jsontext.Value `json:"io.modelcontextprotocol/clientInfo"`
		Level   jsontext.Value `json:"io.modelcontextprotocol/logLevel"`
	}
	if len(raw) == 0 || raw[0] != '{' || jsonv2.Unmarshal(raw, &meta) != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: a %s request needs params._meta with %q and %q", Version20260728, MetaProtocolVersion, MetaClientCapabilities)
	}
	m := &perRequestRequest{}
	if len(meta.Version) == 0 || jsonv2.Unmarshal(meta.Version, &m.version) != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: params._meta[%q] must be a string naming the protocol revision, such as %q", MetaProtocolVersion, Version20260728)
	}
	if !slices.Contains(PerRequestVersions, m.version) {
		return nil, unsupportedVersion(m.version)
	}
	if len(meta.Caps) == 0 || meta.Caps[0] != '{' || jsonv2.Unmarshal(meta.Caps, &m.caps) != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: params._meta[%q] must be an object of the client's capabilities ({} for none)", MetaClientCapabilities)
	}
	if len(meta.Info) > 0 && jsonv2.Unmarshal(meta.Info, &m.clientInfo) != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: params._meta[%q] must be an object with name and version", MetaClientInfo)
	}
	if len(meta.Level) > 0 && (jsonv2.Unmarshal(meta.Level, &m.logLevel) != nil || m.logLevel.rank() == 0) {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: params._meta[%q] must be a log level: debug, info, notice, warning, error, critical, alert or emergency", MetaLogLevel)
	}
	return m, nil
}

// unsupportedVersion is -32022, listing every revision the server speaks:
// the session-era ones are reached through initialize.
func unsupportedVersion(requested string) *jsonrpc.Error {
	return jsonrpc.Errorf(CodeUnsupportedProtocolVersion,
		"Unsupported protocol version %q; this server supports %s", truncateString(requested, 64), strings.Join(allVersions(), ", ")).
		WithData(map[string]any{"supported": allVersions(), "requested": requested})
}

// allVersions is every revision the server speaks, newest first.
func allVersions() []string {
	out := slices.Clone(PerRequestVersions)
	for _, v := range slices.Backward(NegotiatedVersions) {
		out = append(out, v)
	}
	return out
}

// perRequestMethod answers -32601 for a method that does not exist in the
// per-request era or whose capability the server does not declare.
func (s *Server) perRequestMethod(method string) *jsonrpc.Error {
	if removedMethods[method] {
		return jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s does not exist in protocol revision %s", method, Version20260728)
	}
	if method == methodServerDiscover {
		return nil
	}
	spec, ok := methods[method]
	if !ok {
		if s.extension(method) != nil {
			return nil
		}
		return jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %q is not a method of this server", truncateString(method, 64))
	}
	if spec.need != featureNone && !capsDeclare(s.capabilities(rev20260728), spec.need, s) {
		return jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s is not available because this server does not declare the %s capability", method, spec.need)
	}
	return nil
}

// DiscoverResult is the answer to server/discover.
type DiscoverResult struct {
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
}

func (s *Server) discover(_ context.Context, _ *Request) (any, error) {
	return &DiscoverResult{
		SupportedVersions: allVersions(),
		Capabilities:      s.capabilities(rev20260728),
		Instructions:      s.opts.Instructions,
	}, nil
}

// shapePerRequest adds what every 2026-07-28 result carries to an encoded
// result object: resultType, the server's identity in _meta (merged with
// any _meta the handler set) and, for cacheable methods, the cache hints.
func (s *Server) shapePerRequest(method string, result []byte) []byte {
	return s.shapePerRequestAs(method, "complete", result)
}

func (s *Server) shapePerRequestAs(method, resultType string, result []byte) []byte {
	s.perRequestInfoOnce.Do(func() { s.perRequestInfo, _ = marshal(s.impl.forRevision(rev20260728)) })
	info := s.perRequestInfo
	var b bytes.Buffer
	b.Grow(len(result) + len(info) + 96)
	b.WriteString(`{"resultType":"` + resultType + `"`)
	if cacheableMethods[method] {
		b.WriteString(`,"ttlMs":`)
		b.WriteString(itoa(s.opts.CacheTTLMs))
		b.WriteString(`,"cacheScope":`)
		scope := s.opts.CacheScope
		if scope == "" {
			scope = "public"
		}
		b.WriteString(`"` + scope + `"`)
	}
	metaDone := false
	sd := getScanDecoder(result)
	defer sd.release()
	dec := &sd.dec
	if tok, err := dec.ReadToken(); err == nil && tok.Kind() == '{' {
		for dec.PeekKind() != '}' {
			name, err := dec.ReadValue()
			if err != nil {
				break
			}
			// The member's quoted text, kept as a slice of result.
			end := int(dec.InputOffset())
			name = result[end-len(name) : end : end]
			val, err := dec.ReadValue()
			if err != nil {
				break
			}
			switch {
			case nameIs(name, "resultType"):
				continue
			case (nameIs(name, "ttlMs") || nameIs(name, "cacheScope")) && cacheableMethods[method]:
				continue // the configured hints
			case nameIs(name, "_meta") && len(val) > 1 && val[0] == '{':
				b.WriteString(`,"_meta":{"` + MetaServerInfo + `":`)
				b.Write(info)
				if bytes.Contains(val, []byte(MetaServerInfo)) {
					// A result relayed from another server (a gateway's)
					// carries that server's identity: ours replaces it.
					val = withoutMember(val, MetaServerInfo)
				}
				if inner := bytes.TrimSpace(val[1 : len(val)-1]); len(inner) > 0 {
					b.WriteByte(',')
					b.Write(inner)
				}
				b.WriteByte('}')
				metaDone = true
				continue
			}
			b.WriteByte(',')
			if bytes.IndexByte(name, '\\') < 0 {
				b.Write(name) // as AppendQuote would write it
			} else {
				u, _ := jsontext.AppendUnquote(nil, name)
				nb, _ := jsontext.AppendQuote(nil, u)
				b.Write(nb)
			}
			b.WriteByte(':')
			b.Write(val)
		}
	}
	if !metaDone {
		b.WriteString(`,"_meta":{"` + MetaServerInfo + `":`)
		b.Write(info)
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes()
}

// perRequestError maps the session-era codes a handler may return to the per-request
// ones: a missing resource is -32602 in this revision.
func perRequestError(e *jsonrpc.Error) *jsonrpc.Error {
	if e.Code == CodeResourceNotFound {
		c := *e
		c.Code = jsonrpc.CodeInvalidParams
		return &c
	}
	return e
}

// encodePerRequest is encodeResponse for a 2026-07-28 request.
func (s *Server) encodePerRequest(req *Request, res any, err error) []byte {
	if err != nil {
		return jsonrpc.AppendError(nil, req.ID, perRequestError(toRPCError(err)))
	}
	var b []byte
	switch r := res.(type) {
	case taskCreated:
		tb, _ := r.MarshalJSON()
		return jsonrpc.AppendResult(nil, req.ID, s.shapePerRequestAs(req.Method, "task", tb))
	case nil:
		b = []byte("{}")
	case encoded:
		b = r
	default:
		var merr error
		if b, merr = encodeResult(res); merr != nil {
			s.logger.Error("mcp: could not encode a result", "error", merr)
			return jsonrpc.AppendError(nil, req.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the server could not encode its result"))
		}
	}
	return jsonrpc.AppendResult(nil, req.ID, s.shapePerRequest(req.Method, b))
}

func itoa(n int) string { return strconv.Itoa(n) }

// withoutMember returns the object obj without its member name.
func withoutMember(obj []byte, name string) []byte {
	var m map[string]jsontext.Value
	if jsonv2.Unmarshal(obj, &m) != nil {
		return obj
	}
	delete(m, name)
	b, err := jsonv2.Marshal(m, jsonv2.Deterministic(true))
	if err != nil {
		return obj
	}
	return b
}
