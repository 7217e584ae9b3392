package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mcpgate/mcpgate/mcp"
)

// DefaultMaxDescription is the length of a tool's description, in bytes,
// when MapOptions.MaxDescription is zero.
const DefaultMaxDescription = 1024

// MapOptions says which operations become tools, and how.
type MapOptions struct {
	// Include, when not empty, keeps only the operations that a pattern
	// matches. A pattern (path.Match syntax) matches an operation when it
	// matches its operationId, its tool name or one of its tags.
	Include []string

	// Exclude drops the operations that a pattern matches, after Include.
	Exclude []string

	// MaxDescription bounds each description, in bytes. Zero means
	// DefaultMaxDescription.
	MaxDescription int

	// NoOutputSchema leaves out the output schemas, to keep a large API's
	// listing small. Results still carry structured content.
	NoOutputSchema bool
}

// Validate reports a malformed pattern in Include or Exclude, which would
// otherwise match nothing.
func (o *MapOptions) Validate() error {
	for _, p := range slices.Concat(o.Include, o.Exclude) {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("openapi: the pattern %q is malformed: %w", p, err)
		}
	}
	return nil
}

// Tool is an operation as an MCP tool.
type Tool struct {
	// Tool is the definition to list. Its Unvalidated is set: BuildRequest
	// checks the arguments itself, and the API, not the description, has
	// the last word on what its answers hold.
	Tool mcp.Tool

	// OperationID is the operation's operationId, empty when it has none.
	OperationID string

	// Method is the HTTP method, in upper case.
	Method string

	// Path is the operation's path template, as the description has it.
	Path string

	// Tags are the operation's tags.
	Tags []string

	// Servers are the servers the operation or its path declares for
	// itself, over the description's; nil when they declare none. Calls
	// go to the caller's base URL all the same (see BuildRequest): a
	// caller that honours these must choose and trust them itself.
	Servers []string

	// Security are the operation's security requirements, its own or
	// else the description's: alternatives, each the names of the
	// schemes ([SecurityScheme]) it needs together; an empty alternative
	// means none is needed. Nil when the description declares none.
	Security [][]string

	op *operation
}

// SkipReason says why an operation did not become a tool.
type SkipReason string

// The reasons an operation is skipped.
const (
	// SkipPath: the path template is malformed, or names a parameter that
	// is not declared in the path.
	SkipPath SkipReason = "path"
	// SkipParameter: a parameter's location, style or name cannot be sent.
	SkipParameter SkipReason = "parameter"
	// SkipBody: the request body has no media type this package sends
	// (JSON, form, multipart, text), or a form body is not an object.
	SkipBody SkipReason = "body"
	// SkipSchema: a schema could not be converted (an unresolved $ref,
	// nesting past the bound).
	SkipSchema SkipReason = "schema"
)

// Skipped is an operation that did not become a tool.
type Skipped struct {
	Method      string
	Path        string
	OperationID string
	Reason      SkipReason
	Detail      string
}

func (s Skipped) String() string {
	return fmt.Sprintf("%s %s (%s): %s: %s", s.Method, s.Path, s.OperationID, s.Reason, s.Detail)
}

// skipError is an operation's mapping failure, with its reason.
type skipError struct {
	reason SkipReason
	detail string
}

func (e *skipError) Error() string { return string(e.reason) + ": " + e.detail }

func skipf(reason SkipReason, format string, args ...any) *skipError {
	return &skipError{reason: reason, detail: fmt.Sprintf(format, args...)}
}

// methods is the order of an item's operations: the Path Item Object's.
var methods = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}

// opInfo is an operation on its way to a tool.
type opInfo struct {
	method, path string
	item         *openapi3.PathItem
	op           *openapi3.Operation
	base, name   string
	class        nameClass
}

// Tools maps each operation of doc to a tool, in the order of their paths
// and then of their methods, and says which operations could not be
// mapped and why. Operations that opts leaves out are in neither list.
//
// Names are given to all operations before opts filters them, so that a
// tool keeps its name whatever the filters.
func Tools(doc *Document, opts MapOptions) ([]Tool, []Skipped) {
	ops := operations(doc)
	assignNames(ops)
	conv := newSchemaConv()
	type mapped struct {
		tool    Tool
		in, out map[string]any
		inUse   defSet
		outUse  defSet
	}
	var done []*mapped
	var skipped []Skipped
	for _, o := range ops {
		if !opts.keeps(o) {
			continue
		}
		m := &mapped{inUse: defSet{}, outUse: defSet{}}
		op, in, err := mapOperation(conv, o, m.inUse)
		if err != nil {
			skipped = append(skipped, skippedOf(o, err))
			continue
		}
		if !opts.NoOutputSchema {
			// A response schema that cannot be converted costs the tool
			// its output schema only: the call itself does not need it.
			if m.out, err = outputSchema(conv, o.op, m.outUse); err != nil {
				m.out = nil
			}
		}
		m.in = in
		m.tool = Tool{
			Tool: mcp.Tool{
				Name:        o.name,
				Title:       title(o.op.Summary),
				Description: description(o.op, o.method, o.path, opts.maxDescription()),
				Annotations: annotations(o.method),
				Unvalidated: true,
			},
			OperationID: o.op.OperationID,
			Method:      o.method,
			Path:        o.path,
			Tags:        slices.Clone(o.op.Tags),
			Servers:     ownServers(o.item, o.op),
			Security:    security(doc, o.op),
			op:          op,
		}
		done = append(done, m)
	}
	conv.drain()
	tools := make([]Tool, 0, len(done))
	for _, m := range done {
		in, err := withDefs(m.in, m.inUse)
		if m.out != nil {
			if out, err := withDefs(m.out, m.outUse); err == nil {
				m.tool.Tool.OutputSchema = out
			}
		}
		if err != nil {
			t := &m.tool
			skipped = append(skipped, Skipped{Method: t.Method, Path: t.Path, OperationID: t.OperationID, Reason: SkipSchema, Detail: err.Error()})
			continue
		}
		m.tool.Tool.InputSchema = in
		m.tool.op.schema = in
		tools = append(tools, m.tool)
	}
	return tools, skipped
}

// withDefs encodes a root schema with the $defs it reaches.
func withDefs(root map[string]any, used defSet) (json.RawMessage, error) {
	defs, err := closure(used)
	if err != nil {
		return nil, err
	}
	if len(defs) > 0 {
		root["$defs"] = defs
	}
	b, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("encoding the schema: %w", err)
	}
	return b, nil
}

func skippedOf(o *opInfo, err error) Skipped {
	s := Skipped{Method: o.method, Path: o.path, OperationID: o.op.OperationID, Reason: SkipSchema, Detail: err.Error()}
	if se, ok := err.(*skipError); ok {
		s.Reason, s.Detail = se.reason, se.detail
	}
	return s
}

// operations lists doc's operations by path, then method.
func operations(doc *Document) []*opInfo {
	if doc == nil || doc.t == nil || doc.t.Paths == nil {
		return nil
	}
	items := doc.t.Paths.Map()
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range items {
			if !yield(p) {
				return
			}
		}
	})
	var ops []*opInfo
	for _, p := range paths {
		item := items[p]
		if item == nil {
			continue
		}
		for _, m := range methods {
			op := item.GetOperation(m)
			if op == nil {
				continue
			}
			o := &opInfo{method: m, path: p, item: item, op: op}
			o.base, o.class = baseName(op.OperationID, m, p)
			ops = append(ops, o)
		}
	}
	return ops
}

func (o *MapOptions) keeps(op *opInfo) bool {
	if len(o.Include) > 0 && !matches(o.Include, op) {
		return false
	}
	return !matches(o.Exclude, op)
}

func matches(patterns []string, op *opInfo) bool {
	for _, p := range patterns {
		for _, s := range slices.Concat([]string{op.op.OperationID, op.name}, op.op.Tags) {
			if ok, _ := path.Match(p, s); ok && s != "" {
				return true
			}
		}
	}
	return false
}

func (o *MapOptions) maxDescription() int {
	if o.MaxDescription > 0 {
		return o.MaxDescription
	}
	return DefaultMaxDescription
}

// title is the operation's summary, on one line.
func title(summary string) string {
	return truncate(strings.Join(strings.Fields(summary), " "), 200)
}

// description is the summary, then the description, trimmed to limit bytes;
// the method and path when both are empty.
func description(op *openapi3.Operation, method, path string, limit int) string {
	parts := make([]string, 0, 3)
	if op.Deprecated {
		parts = append(parts, "Deprecated.")
	}
	for _, s := range []string{op.Summary, op.Description} {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 || len(parts) == 1 && op.Deprecated {
		parts = append(parts, method+" "+path)
	}
	return truncate(strings.Join(parts, "\n\n"), limit)
}

// truncate cuts s to at most limit bytes, on a rune boundary, ending it with
// an ellipsis when it cuts.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const ellipsis = "…"
	cut := limit - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:max(cut, 0)]) + ellipsis
}

// annotations are the hints HTTP's method semantics give (RFC 9110,
// section 9.2). MCP's defaults are readOnly false, destructive true,
// idempotent false and openWorld true: GET and HEAD are read-only; PUT and
// DELETE are idempotent and may destroy; POST and PATCH keep the
// defaults, destructive included, as nothing says they only add. Every
// REST API is an open world.
func annotations(method string) *mcp.ToolAnnotations {
	yes, no := true, false
	a := &mcp.ToolAnnotations{OpenWorldHint: &yes}
	switch method {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		a.ReadOnlyHint = true
		a.DestructiveHint = &no
		a.IdempotentHint = true
	case "PUT", "DELETE":
		a.DestructiveHint = &yes
		a.IdempotentHint = true
	default:
		a.DestructiveHint = &yes
	}
	return a
}

// security is the operation's security requirements, else the
// description's, as alternatives of sorted scheme names.
func security(doc *Document, op *openapi3.Operation) [][]string {
	reqs := doc.t.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	if reqs == nil {
		return nil
	}
	out := make([][]string, 0, len(reqs))
	for _, r := range reqs {
		out = append(out, slices.Sorted(maps.Keys(r)))
	}
	return out
}

// ownServers are the servers an operation declares, else its path's.
func ownServers(item *openapi3.PathItem, op *openapi3.Operation) []string {
	servers := item.Servers
	if op.Servers != nil {
		servers = *op.Servers
	}
	var out []string
	for _, s := range servers {
		if s != nil && s.URL != "" {
			out = append(out, s.URL)
		}
	}
	return out
}
