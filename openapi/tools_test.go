package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// schemaText is a tool's schema as JSON text.
func schemaText(schema any) string {
	b, _ := schema.(json.RawMessage)
	return string(b)
}

func toolNames(tools []Tool) []string {
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.Tool.Name
	}
	return names
}

func loadYAML(t testing.TB, yaml string) *Document {
	t.Helper()
	doc, err := Load(context.Background(), "", LoadOptions{Data: []byte(yaml)})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

const namesDoc = `
openapi: 3.0.3
info: {title: names, version: "1"}
paths:
  /a:
    get: {operationId: repos/get, responses: {"204": {description: ok}}}
    post: {operationId: repos_get, responses: {"204": {description: ok}}}
  /b:
    get: {operationId: get user, tags: [users], responses: {"204": {description: ok}}}
    put: {operationId: dup, responses: {"204": {description: ok}}}
    post: {operationId: dup, responses: {"204": {description: ok}}}
  /c:
    get: {responses: {"204": {description: ok}}}
    delete: {operationId: "日本語", responses: {"204": {description: ok}}}
  /d/{id}:
    get: {parameters: [{name: id, in: path, required: true, schema: {type: string}}], responses: {"204": {description: ok}}}
  /d_{id}:
    get: {parameters: [{name: id, in: path, required: true, schema: {type: string}}], responses: {"204": {description: ok}}}
  /long1:
    get: {operationId: "%s1", responses: {"204": {description: ok}}}
  /long2:
    get: {operationId: "%s2", responses: {"204": {description: ok}}}
  /long3:
    get: {operationId: "%s", tags: [long], responses: {"204": {description: ok}}}
`

func TestToolNamesAreSanitisedAndCollisionsSettledInOrder(t *testing.T) {
	long := strings.Repeat("x", 200)
	doc := loadYAML(t, fmt.Sprintf(namesDoc, long, long, strings.Repeat("y", 128)))
	tools, skipped := Tools(doc, MapOptions{})
	if len(skipped) > 0 {
		t.Fatalf("skipped %v", skipped)
	}
	got := map[string]string{}
	for _, tl := range tools {
		got[tl.Method+" "+tl.Path] = tl.Tool.Name
		if err := mcp.ValidateToolName(tl.Tool.Name); err != nil {
			t.Errorf("%s %s: %v", tl.Method, tl.Path, err)
		}
	}
	want := map[string]string{
		"POST /a":     "repos_get",   // valid as written: claims its name first
		"GET /a":      "repos_get_2", // sanitised to a name already claimed
		"GET /b":      "get_user",
		"PUT /b":      "dup", // operationIds repeated: the first in order keeps it
		"POST /b":     "dup_2",
		"GET /c":      "get_c",    // no operationId: method and path
		"DELETE /c":   "delete_c", // nothing left of the operationId
		"GET /d/{id}": "get_d_id",
		"GET /d_{id}": "get_d_id_2",
		"GET /long3":  strings.Repeat("y", 128),
		"GET /long1":  got["GET /long1"],
		"GET /long2":  got["GET /long2"],
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s is named %q, want %q", k, got[k], w)
		}
	}
	l1, l2 := got["GET /long1"], got["GET /long2"]
	if len(l1) != 128 || len(l2) != 128 || l1 == l2 || !strings.HasPrefix(l1, strings.Repeat("x", 100)) {
		t.Errorf("names too long are not cut to distinct 128-byte names: %q, %q", l1, l2)
	}

	again, _ := Tools(loadYAML(t, fmt.Sprintf(namesDoc, long, long, strings.Repeat("y", 128))), MapOptions{})
	if !slices.Equal(toolNames(tools), toolNames(again)) {
		t.Errorf("names differ from one load to the next:\n%v\n%v", toolNames(tools), toolNames(again))
	}
	filtered, _ := Tools(doc, MapOptions{Include: []string{"repos/get", "get_d_id_2"}})
	if names := toolNames(filtered); !slices.Equal(names, []string{"repos_get_2", "get_d_id_2"}) {
		t.Errorf("filtered, the tools are %v; a filter must not rename them", names)
	}
}

func TestIncludeAndExcludeMatchOperationIDsNamesAndTags(t *testing.T) {
	doc := loadYAML(t, fmt.Sprintf(namesDoc, "l", "l", "l"))
	tests := []struct {
		name string
		opts MapOptions
		want []string
	}{
		{"operationId glob", MapOptions{Include: []string{"repos/*"}}, []string{"repos_get_2"}},
		{"tool name glob", MapOptions{Include: []string{"repos_*"}}, []string{"repos_get_2", "repos_get"}},
		{"tag", MapOptions{Include: []string{"users"}}, []string{"get_user"}},
		{"exclude after include", MapOptions{Include: []string{"repos*", "dup"}, Exclude: []string{"repos/*", "dup_2"}}, []string{"repos_get", "dup"}},
		{"exclude only", MapOptions{Exclude: []string{"get_*", "*_2", "repos*", "dup", "delete_c", "l*"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools, _ := Tools(doc, tt.opts)
			if got := toolNames(tools); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	bad := MapOptions{Include: []string{"[unclosed"}}
	if err := bad.Validate(); err == nil {
		t.Error("a malformed pattern passed Validate")
	}
}

func TestAnnotationsFollowTheMethod(t *testing.T) {
	tools := toolsOf(t, "testdata/api-3.0.yaml")
	tests := []struct {
		tool                              string
		readOnly, destructive, idempotent bool
	}{
		{"getItem", true, false, true},
		{"deleteItem", false, true, true},
		{"replaceItemText", false, true, true},
		{"createItem", false, true, false},
	}
	for _, tt := range tests {
		a := tools[tt.tool].Tool.Annotations
		if a.ReadOnlyHint != tt.readOnly || *a.DestructiveHint != tt.destructive || a.IdempotentHint != tt.idempotent || !*a.OpenWorldHint {
			t.Errorf("%s: readOnly %v, destructive %v, idempotent %v, openWorld %v; want %v, %v, %v, true",
				tt.tool, a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint, tt.readOnly, tt.destructive, tt.idempotent)
		}
	}
}

func TestDescriptionsAreTrimmedAndBounded(t *testing.T) {
	doc := loadYAML(t, `
openapi: 3.0.3
info: {title: d, version: "1"}
paths:
  /a:
    get:
      summary: "  Get   a\n thing "
      description: "\n Long text: ééééééééééééééééééééééééééééééééééééé \n"
      responses: {"204": {description: ok}}
  /b:
    get:
      deprecated: true
      responses: {"204": {description: ok}}
`)
	tools, _ := Tools(doc, MapOptions{MaxDescription: 40})
	a, b := tools[0].Tool, tools[1].Tool
	if a.Title != "Get a thing" {
		t.Errorf("title %q", a.Title)
	}
	if want := "Get   a\n thing\n\nLong text: ééééé…"; a.Description != want {
		t.Errorf("description %q, want %q", a.Description, want)
	}
	if len(a.Description) > 40 || !strings.HasSuffix(a.Description, "…") {
		t.Errorf("description of %d bytes, want at most 40 ending in an ellipsis", len(a.Description))
	}
	if b.Description != "Deprecated.\n\nGET /b" || b.Title != "" {
		t.Errorf("without summary nor description: title %q, description %q", b.Title, b.Description)
	}
}

func TestSchemasBecomeJSONSchema2020(t *testing.T) {
	v30, v31 := toolsOf(t, "testdata/api-3.0.yaml"), toolsOf(t, "testdata/api-3.1.json")
	tests := []struct {
		name   string
		schema any
		want   string
	}{
		{"3.0 nullable and boolean exclusiveMaximum", v30["listItems"].Tool.InputSchema,
			`{"additionalProperties":false,"properties":{"limit":{"exclusiveMaximum":100,"minimum":1,"type":"integer"},"note":{"type":["string","null"]}},"type":"object"}`},
		{"3.1 type array and numeric exclusiveMinimum", v31["getItem"].Tool.InputSchema,
			`{"additionalProperties":false,"properties":{"id":{"exclusiveMinimum":0,"type":"integer"}},"required":["id"],"type":"object"}`},
		{"a body merged, its readOnly property left out, a clash prefixed", v30["createItem"].Tool.InputSchema,
			`{"additionalProperties":false,"properties":{"body_name":{"minLength":1,"type":"string"},"note":{"type":["string","null"]},"query_name":{"type":"string"},"tags":{"items":{"type":"string"},"type":"array"}},"required":["body_name"],"type":"object"}`},
		{"oneOf and allOf kept, $refs in $defs, nullable allOf as anyOf with null", v30["addPet"].Tool.InputSchema,
			`{"$defs":{"Cat":{"allOf":[{"$ref":"#/$defs/Pet"},{"properties":{"indoor":{"type":"boolean"},"kind":{"enum":["cat"]}},"type":"object"}]},"Dog":{"allOf":[{"$ref":"#/$defs/Pet"},{"properties":{"kind":{"enum":["dog"]},"owner":{"anyOf":[{"type":"null"},{"allOf":[{"$ref":"#/$defs/Owner"}]}]}},"type":"object"}]},"Owner":{"properties":{"name":{"type":"string"}},"type":"object"},"Pet":{"properties":{"kind":{"type":"string"}},"required":["kind"],"type":"object"}},"additionalProperties":false,"properties":{"body":{"oneOf":[{"$ref":"#/$defs/Cat"},{"$ref":"#/$defs/Dog"}]}},"required":["body"],"type":"object"}`},
		{"an output object's $ref opened at the root, recursion through $defs", v30["getTree"].Tool.OutputSchema,
			`{"$defs":{"Node":{"properties":{"children":{"items":{"$ref":"#/$defs/Node"},"type":"array"},"name":{"type":"string"}},"type":"object"}},"properties":{"children":{"items":{"$ref":"#/$defs/Node"},"type":"array"},"name":{"type":"string"}},"type":"object"}`},
		{"an output array wrapped as result", v30["listItems"].Tool.OutputSchema,
			`{"$defs":{"Item":{"properties":{"id":{"readOnly":true,"type":"integer"},"name":{"type":"string"},"note":{"type":["string","null"]}},"required":["id","name"],"type":"object"}},"properties":{"result":{"items":{"$ref":"#/$defs/Item"},"type":"array"}},"required":["result"],"type":"object"}`},
		{"an output object or null wrapped as result", v31["getItem"].Tool.OutputSchema,
			`{"properties":{"result":{"properties":{"id":{"type":"integer"}},"type":["object","null"]}},"required":["result"],"type":"object"}`},
		{"no output schema without a JSON answer", v30["deleteItem"].Tool.OutputSchema, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := schemaText(tt.schema); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestEverySchemaIsAnObjectThatCompiles checks what MCP and the validator
// need of every tool in the test descriptions.
func TestEverySchemaIsAnObjectThatCompiles(t *testing.T) {
	for _, f := range []string{"testdata/api-3.0.yaml", "testdata/api-3.1.json", "testdata/swagger-2.0.yaml", "testdata/multi/api.yaml"} {
		for name, tool := range toolsOf(t, f) {
			checkSchemas(t, f+" "+name, tool)
		}
	}
}

func checkSchemas(t testing.TB, name string, tool *Tool) {
	t.Helper()
	for _, s := range []any{tool.Tool.InputSchema, tool.Tool.OutputSchema} {
		if s == nil {
			continue
		}
		var root struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(s.(json.RawMessage), &root); err != nil || root.Type != "object" {
			t.Errorf("%s: the schema's root is %q (%v), not an object: %s", name, root.Type, err, s)
		}
		if _, err := compileSchema(s.(json.RawMessage)); err != nil {
			t.Errorf("%s: the schema does not compile: %v", name, err)
		}
	}
}

func TestSkippedOperationsSayWhy(t *testing.T) {
	deep := "{type: string}"
	for range maxNesting + 1 {
		deep = "{type: array, items: " + deep + "}"
	}
	doc := loadYAML(t, `
openapi: 3.0.3
info: {title: skips, version: "1"}
paths:
  /xml:
    post:
      operationId: xmlOnly
      requestBody: {content: {application/xml: {schema: {type: object}}}}
      responses: {"204": {description: ok}}
  /undeclared/{id}:
    get: {operationId: undeclared, responses: {"204": {description: ok}}}
  /unclosed/{id:
    get: {operationId: unclosed, responses: {"204": {description: ok}}}
  /form:
    post:
      operationId: formScalar
      requestBody: {content: {application/x-www-form-urlencoded: {schema: {type: string}}}}
      responses: {"204": {description: ok}}
  /header:
    get:
      operationId: badHeader
      parameters: [{name: "Bad Header", in: header, schema: {type: string}}]
      responses: {"204": {description: ok}}
  /style/{id}:
    get:
      operationId: badStyle
      parameters: [{name: id, in: path, required: true, style: form, schema: {type: string}}]
      responses: {"204": {description: ok}}
  /deep:
    get:
      operationId: deep
      parameters: [{name: q, in: query, schema: `+deep+`}]
      responses: {"204": {description: ok}}
  /fine:
    get: {operationId: fine, responses: {"204": {description: ok}}}
  /zz-deep-response:
    get:
      operationId: deepResponse
      responses: {"200": {description: ok, content: {application/json: {schema: `+deep+`}}}}
`)
	tools, skipped := Tools(doc, MapOptions{})
	if names := toolNames(tools); !slices.Equal(names, []string{"fine", "deepResponse"}) {
		t.Errorf("tools %v, want fine and deepResponse", names)
	}
	if len(tools) == 2 && tools[1].Tool.OutputSchema != nil {
		t.Errorf("a response schema too deep to convert is the output schema %s", schemaText(tools[1].Tool.OutputSchema))
	}
	want := map[string]SkipReason{
		"xmlOnly": SkipBody, "undeclared": SkipPath, "unclosed": SkipPath, "formScalar": SkipBody,
		"badHeader": SkipParameter, "badStyle": SkipParameter, "deep": SkipSchema,
	}
	for _, s := range skipped {
		if want[s.OperationID] != s.Reason || s.Detail == "" {
			t.Errorf("%s skipped for %q (%s), want %q", s.OperationID, s.Reason, s.Detail, want[s.OperationID])
		}
		delete(want, s.OperationID)
	}
	if len(want) > 0 {
		t.Errorf("not reported as skipped: %v", want)
	}
}

// TestToolsSayWhichOperationsNameServersOfTheirOwn: an operation's own
// servers, else its path's, are the tool's Servers; calls still go to
// the caller's base URL.
func TestToolsSayWhichOperationsNameServersOfTheirOwn(t *testing.T) {
	f := filepath.Join(t.TempDir(), "servers.yaml")
	spec := `openapi: 3.0.3
info: {title: S, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /plain: {get: {operationId: plain, responses: {"200": {description: ok}}}}
  /uploads:
    servers: [{url: "https://uploads.example.com"}]
    post: {operationId: upload, responses: {"200": {description: ok}}}
    get:
      operationId: listUploads
      servers: [{url: "https://mirror.example.com"}, {url: "https://mirror2.example.com"}]
      responses: {"200": {description: ok}}
`
	if err := os.WriteFile(f, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	tools := toolsOf(t, f)
	for name, want := range map[string][]string{
		"plain":       nil,
		"upload":      {"https://uploads.example.com"},
		"listUploads": {"https://mirror.example.com", "https://mirror2.example.com"},
	} {
		if got := tools[name].Servers; !slices.Equal(got, want) {
			t.Errorf("%s: servers %q, want %q", name, got, want)
		}
	}
	base, _ := url.Parse("http://127.0.0.1:9/v1")
	req, err := tools["upload"].BuildRequest(context.Background(), base, nil)
	if err != nil || req.URL.String() != "http://127.0.0.1:9/v1/uploads" {
		t.Errorf("upload's request: %v %v, want it on the base URL", req.URL, err)
	}
}
