package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/internal/httpmeta"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Per-request (2026-07-28) requests: no session, every POST stands alone. The
// routing headers repeat what the body says, so that proxies can route
// without parsing JSON; the server trusts only the body and answers a
// header that disagrees with 400 and -32020.

const (
	headerMethod = "Mcp-Method"
	headerName   = "Mcp-Name"
)

func (h *Handler) servePerRequest(w http.ResponseWriter, r *http.Request, b *body) {
	msg := b.msg
	if e := checkPerRequestHeaders(r, msg); e != nil {
		writeRPCError(w, http.StatusBadRequest, b.id, e)
		return
	}
	// A session of its own, for this request only: it holds no state
	// between requests. Its start gives us the server's view.
	s := h.oneRequestSession(r, "per-request", &mcp.SessionOptions{})
	defer s.close(true)
	if msg.Method == "tools/call" {
		if e := checkParamHeaders(r, s.view, msg.Params); e != nil {
			writeRPCError(w, http.StatusBadRequest, b.id, e)
			return
		}
	}
	if e := s.view.CheckPerRequest(msg.Method, msg.Params); e != nil {
		writeRPCError(w, perRequestStatus(e.Code), b.id, e)
		return
	}
	h.inflight.Add(1)
	defer h.inflight.Done()
	// A subscription ends with the server.
	defer context.AfterFunc(h.closingCtx, s.ss.Drain)()
	h.dispatch(w, r, s, b)
}

// perRequestStatus is the HTTP status of an error found before a per-request
// request runs.
func perRequestStatus(code int64) int {
	if code == jsonrpc.CodeMethodNotFound {
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

func writeRPCError(w http.ResponseWriter, status int, id *jsonrpc.ID, e *jsonrpc.Error) {
	var rid jsonrpc.ID
	if id != nil {
		rid = *id
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(jsonrpc.AppendError(nil, rid, e))
}

// checkPerRequestHeaders compares MCP-Protocol-Version, Mcp-Method and
// Mcp-Name with the body.
func checkPerRequestHeaders(r *http.Request, msg *jsonrpc.Message) *jsonrpc.Error {
	mismatch := func(format string, args ...any) *jsonrpc.Error {
		return jsonrpc.Errorf(mcp.CodeHeaderMismatch, "Header mismatch: "+format, args...)
	}
	claimed := claimedVersion(msg.Params)
	if claimed == "" {
		return nil // a malformed claim: the engine's checks say what is wrong
	}
	switch vals := r.Header.Values(headerProtocolVersion); {
	case len(vals) == 0:
		return mismatch("the MCP-Protocol-Version header is required and must equal params._meta[%q] (%q)", mcp.MetaProtocolVersion, claimed)
	case len(vals) > 1 || vals[0] != claimed:
		return mismatch("MCP-Protocol-Version %q differs from params._meta[%q] %q", strings.Join(vals, ", "), mcp.MetaProtocolVersion, claimed)
	}
	switch vals := r.Header.Values(headerMethod); {
	case len(vals) == 0:
		return mismatch("the Mcp-Method header is required and must equal the method (%q)", msg.Method)
	case len(vals) > 1 || vals[0] != msg.Method:
		return mismatch("Mcp-Method %q differs from the method %q", strings.Join(vals, ", "), msg.Method)
	}
	member := nameMember(msg.Method)
	if member == "" {
		return nil
	}
	want, _ := stringMember(msg.Params, member)
	vals := r.Header.Values(headerName)
	if len(vals) == 0 {
		return mismatch("the Mcp-Name header is required for %s and must equal params.%s (%q)", msg.Method, member, want)
	}
	got, ok := httpmeta.DecodeValue(vals[0])
	if len(vals) > 1 || !ok || got != want {
		return mismatch("Mcp-Name %q differs from params.%s %q", vals[0], member, want)
	}
	return nil
}

// claimedVersion is params._meta's protocol version, "" when it is not a
// string. It reads the member names exactly; params whose names would
// need more (escapes, another letter case, which encoding/json matches)
// are decoded as before.
func claimedVersion(params []byte) string {
	meta, simple := exactMember(params, "_meta")
	if !simple {
		return claimedVersionSlow(params)
	}
	if len(meta) == 0 || meta[0] == 'n' {
		return ""
	}
	if meta[0] != '{' {
		return "" // a type error
	}
	v, simple := exactMember(meta, mcp.MetaProtocolVersion)
	if !simple {
		return claimedVersionSlow(params)
	}
	if len(v) == 0 || v[0] != '"' {
		return "" // absent, null or a type error
	}
	s, ok := plainString(v)
	if !ok {
		return claimedVersionSlow(params)
	}
	return s
}

func claimedVersionSlow(params []byte) string {
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	return p.Meta.Version
}

// stringMember is params[name] when it is a string (or null, read as "").
func stringMember(params []byte, name string) (string, bool) {
	if len(params) > 0 && params[0] == '{' {
		if v, simple := exactMember(params, name); simple {
			switch {
			case v == nil:
				return "", false
			case v[0] == 'n':
				return "", true
			case v[0] != '"':
				return "", false
			}
			if s, ok := plainString(v); ok {
				return s, true
			}
		}
	}
	var p map[string]jsontext.Value
	if json.Unmarshal(params, &p) != nil {
		return "", false
	}
	var s string
	if v, ok := p[name]; !ok || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// plainString is the text of a JSON string without escapes and of valid
// UTF-8, which needs no decoding.
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
		return "", false
	}
	return string(v[1 : len(v)-1]), true
}

// exactMember returns the raw value of obj's last member called name (nil
// when there is none), reading every member. simple is false when obj is
// not a well-formed object or a member name has an escape or equals name
// but for letter case: what encoding/json would read then takes decoding.
func exactMember(obj []byte, name string) (val []byte, simple bool) {
	sd := scanDecoders.Get().(*scanDecoder)
	sd.buf = *bytes.NewBuffer(obj)
	sd.dec.Reset(&sd.buf, scanOptions...)
	defer func() {
		sd.buf = bytes.Buffer{}
		sd.dec.Reset(&sd.buf)
		scanDecoders.Put(sd)
	}()
	d := &sd.dec
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	for d.PeekKind() == '"' {
		k, err := d.ReadValue()
		if err != nil || bytes.IndexByte(k, '\\') >= 0 {
			return nil, false
		}
		k = k[1 : len(k)-1]
		exact := string(k) == name
		if !exact && len(k) > 0 && strings.EqualFold(string(k), name) {
			return nil, false
		}
		v, err := d.ReadValue()
		if err != nil {
			return nil, false
		}
		if exact {
			end := int(d.InputOffset())
			val = obj[end-len(v) : end : end]
		}
	}
	if d.PeekKind() != '}' {
		return nil, false
	}
	return val, true
}

// scanDecoder is a jsontext.Decoder kept for reuse, reading in place.
type scanDecoder struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

var (
	scanDecoders = sync.Pool{New: func() any { return new(scanDecoder) }}
	scanOptions  = []jsontext.Options{jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)}
)

// checkParamHeaders compares the Mcp-Param-* headers of a tools/call with
// the arguments they repeat: each annotated argument present in the body
// needs its header, with the same value.
func checkParamHeaders(r *http.Request, view httpmeta.Server, params []byte) *jsonrpc.Error {
	// Most tools have no annotations: only their name is read then.
	name, _ := stringMember(params, "name")
	hs := view.ParamHeaders(name)
	if len(hs) == 0 {
		return nil
	}
	var p struct {
		Arguments map[string]any `json:"arguments"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil // the engine says what is wrong with the params
	}
	for _, ph := range hs {
		header := "Mcp-Param-" + ph.Name
		var v any = p.Arguments
		for _, k := range ph.Path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[k]
		}
		vals := r.Header.Values(header)
		if v == nil {
			continue // absent or null: the header is omitted, and ignored
		}
		if len(vals) == 0 {
			return jsonrpc.Errorf(mcp.CodeHeaderMismatch, "Header mismatch: the argument %s is in the body, so the %s header is required", strings.Join(ph.Path, "."), header)
		}
		got, ok := httpmeta.DecodeValue(vals[0])
		if len(vals) > 1 || !ok || !sameParam(got, v) {
			return jsonrpc.Errorf(mcp.CodeHeaderMismatch, "Header mismatch: %s %q does not match the argument %s (or is not a valid header value)", header, vals[0], strings.Join(ph.Path, "."))
		}
	}
	return nil
}

// sameParam compares a header's text with a JSON argument: strings as
// they are, numbers numerically, booleans as true/false.
func sameParam(h string, v any) bool {
	switch x := v.(type) {
	case string:
		return h == x
	case bool:
		return h == strconv.FormatBool(x)
	case float64:
		f, err := strconv.ParseFloat(h, 64)
		return err == nil && f == x
	}
	return false
}

// perRequestHeaders are the routing headers of a 2026-07-28 request, repeated
// from its body: MCP-Protocol-Version, Mcp-Method and, for the methods
// that name something, Mcp-Name.
func perRequestHeaders(m *jsonrpc.Message) http.Header {
	h := http.Header{}
	h.Set(headerProtocolVersion, claimedVersion(m.Params))
	h.Set(headerMethod, m.Method)
	if member := nameMember(m.Method); member != "" {
		if v, ok := stringMember(m.Params, member); ok {
			h.Set(headerName, httpmeta.EncodeValue(v))
		}
	}
	return h
}

// nameMember is the params member that Mcp-Name repeats, "" for methods
// that name nothing.
func nameMember(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId"
	}
	return ""
}
