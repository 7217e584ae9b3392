package interop

// A REST API behind the gateway, as a Claude Desktop style client sees
// it: a small API on loopback with an OpenAPI description, configured as
// an `openapi` server with its credential in `headers`, and the
// TypeScript SDK's client talking to `mcpgate serve --config` over stdio
// (the client starts the gateway, as Claude Desktop does) and over
// Streamable HTTP. The client lists the operations as prefixed tools
// with their schemas and calls them; the API checks the requests it got,
// and the TS SDK checks each structured result against the tool's output
// schema, a validator we did not write.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// petSpec is the REST API's description: a GET with a path and a query
// parameter, a POST with a JSON body, each with a JSON answer. Its server
// is a placeholder; the configuration's baseUrl says where the API is.
const petSpec = `openapi: 3.0.3
info: {title: Pets, version: "1.0"}
servers: [{url: "https://pets.invalid/v1"}]
paths:
  /pets/{petId}:
    get:
      operationId: getPet
      summary: Get a pet by its id
      parameters:
        - {name: petId, in: path, required: true, schema: {type: string}}
        - {name: include, in: query, schema: {type: string}}
      responses:
        "200":
          description: the pet
          content:
            application/json:
              schema: {type: object, required: [id, name], properties: {id: {type: string}, name: {type: string}, include: {type: string}}}
  /pets:
    post:
      operationId: createPet
      summary: Add a pet
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, required: [name], properties: {name: {type: string}, tag: {type: string}, age: {type: integer, minimum: 0}}}
      responses:
        "201":
          description: the pet added
          content:
            application/json:
              schema: {type: object, required: [id], properties: {id: {type: string}, name: {type: string}, tag: {type: string}, age: {type: integer}}}
`

// petToken is the API's credential: in the gateway's environment only,
// reaching its configuration through ${PETS_TOKEN}.
const petToken = "pets-secret-0123456789abcdef"

// petRequest is what the API got.
type petRequest struct {
	line, auth, contentType, body string
}

// petAPI is the REST API on loopback: it records each request and
// answers with JSON built from it.
type petAPI struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []petRequest
}

func newPetAPI(t *testing.T) *petAPI {
	a := &petAPI{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		a.mu.Lock()
		a.got = append(a.got, petRequest{r.Method + " " + r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(body)})
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		id, ok := strings.CutPrefix(r.URL.Path, "/v1/pets/")
		switch {
		case r.Method == http.MethodGet && ok:
			json.NewEncoder(w).Encode(map[string]any{"id": id, "name": "Rex", "include": r.URL.Query().Get("include")})
		case r.Method == http.MethodPost && r.URL.Path == "/v1/pets":
			var pet map[string]any
			if json.Unmarshal(body, &pet) != nil {
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(`{"message":"the body is not JSON"}`))
				return
			}
			pet["id"] = "p-1"
			w.WriteHeader(http.StatusCreated)
			json.NewEncoder(w).Encode(pet)
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"no such route"}`))
		}
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// requests returns what the API got so far.
func (a *petAPI) requests() []petRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.got)
}

// writePetGatewayConfig writes a Claude Desktop style configuration with
// the API as the server pets: its description in a file, its base URL
// the loopback server, and its credential from the environment.
func writePetGatewayConfig(t *testing.T, api *petAPI) string {
	t.Helper()
	// Under the run's directory, as in gateway_test.go: the gateway may
	// still be writing its state as the test ends.
	dir, err := os.MkdirTemp(env.tmp, "openapi-")
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "pets.yaml")
	if err := os.WriteFile(spec, []byte(petSpec), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(map[string]any{
		"mcpServers": map[string]any{
			"pets": map[string]any{
				"openapi": map[string]any{"spec": spec, "baseUrl": api.srv.URL + "/v1"},
				"headers": map[string]any{"Authorization": "Bearer ${PETS_TOKEN}"},
			},
		},
		"state": map[string]any{"db": filepath.Join(dir, "state.db")},
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "claude_desktop_config.json")
	if err := os.WriteFile(config, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return config
}

// restTool is a tool as the TS client listed it.
type restTool struct {
	Name        string
	InputSchema struct {
		Type       string
		Properties map[string]struct{ Type string }
		Required   []string
	}
	OutputSchema *struct{ Type string }
	Annotations  struct {
		ReadOnlyHint bool `json:"readOnlyHint"`
	}
}

// TestTypeScriptClientListsAndCallsOpenAPIToolsThroughTheGateway: over
// stdio and Streamable HTTP, the TS SDK client sees the API's operations
// as tools prefixed with the server's name, with their parameters and
// body in one input schema, an output schema, and the read-only hint on
// the GET; each call reaches the API as the description says, with the
// configured Authorization, and comes back as structured content (which
// the SDK validates against the output schema); bad arguments are a tool
// error naming the field, and nothing is sent; the credential is in no
// reply the client gets.
func TestTypeScriptClientListsAndCallsOpenAPIToolsThroughTheGateway(t *testing.T) {
	t.Parallel()
	d := startTSDriver(t)
	tests := []struct {
		transport string
		// target starts the gateway for config (over HTTP) or says how the
		// client starts it (over stdio).
		target func(t *testing.T, config string) tsTarget
	}{
		{"stdio", func(t *testing.T, config string) tsTarget {
			return tsTarget{transport: "stdio", command: env.mcpgate, args: []string{"serve", "--stdio", "--config", config, "--log-level", "warn"},
				env: map[string]string{"PETS_TOKEN": petToken}}
		}},
		{"http", func(t *testing.T, config string) tsTarget {
			gw, url := startHTTPServer(t, env.mcpgate, []string{"serve", "--config", config, "--addr", "127.0.0.1:0", "--log-level", "warn"},
				[]string{"PETS_TOKEN=" + petToken}, regexp.MustCompile(`mcpgate is listening on (http://\S+)`))
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the gateway's log:\n%s", gw.out)
				}
			})
			return tsTarget{transport: "http", url: url}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.transport, func(t *testing.T) {
			r := record(t, "TS SDK 1.32.2 client", "mcpgate gateway (a REST API by its OpenAPI description)", transportLabel[tt.transport], "")
			ctx := testCtx(t, 60*time.Second)
			api := newPetAPI(t)
			s, err := d.connect(ctx, tt.target(t, writePetGatewayConfig(t, api)), "")
			if err != nil {
				fatalf(t, r, "connecting: %v", err)
			}
			r.setNegotiated(s.Negotiated())
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("closing: %v", err)
				}
				if len(s.clientErrors) > 0 {
					t.Errorf("the TypeScript client reported errors: %q", s.clientErrors)
				}
			}()
			petTools(ctx, t, r, s)
			petCalls(ctx, t, r, s, api)
			checkPing(ctx, t, r, s)
		})
	}
}

// petTools lists the tools until the API's are there (the gateway
// connects its servers in the background) and checks their schemas.
func petTools(ctx context.Context, t *testing.T, r *row, s *tsSession) {
	t.Helper()
	var raw json.RawMessage
	tools := map[string]restTool{}
	for {
		reply, err := s.d.do(ctx, map[string]any{"op": "listTools"})
		if err == nil {
			var res struct{ Tools []restTool }
			if err := json.Unmarshal(reply.Result, &res); err != nil {
				fatalf(t, r, "tools/list: %v in %s", err, reply.Result)
			}
			for _, tool := range res.Tools {
				tools[tool.Name] = tool
			}
			raw = reply.Result
			if _, ok := tools["pets_getPet"]; ok {
				break
			}
		}
		select {
		case <-ctx.Done():
			fatalf(t, r, "tools/list has no pets_getPet after %v: %v %s", ctx.Err(), err, raw)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if strings.Contains(string(raw), petToken) {
		t.Errorf("tools/list carries the API's credential: %s", raw)
	}
	want := []struct {
		name     string
		props    map[string]string // name: JSON Schema type
		required []string
		readOnly bool
	}{
		{"pets_getPet", map[string]string{"petId": "string", "include": "string"}, []string{"petId"}, true},
		{"pets_createPet", map[string]string{"name": "string", "tag": "string", "age": "integer"}, []string{"name"}, false},
	}
	for _, w := range want {
		tool, ok := tools[w.name]
		if !ok {
			t.Errorf("tools/list lacks %s: %s", w.name, raw)
			continue
		}
		got := map[string]string{}
		for k, p := range tool.InputSchema.Properties {
			got[k] = p.Type
		}
		if tool.InputSchema.Type != "object" || !reflect.DeepEqual(got, w.props) || !slices.Equal(slices.Sorted(slices.Values(tool.InputSchema.Required)), w.required) {
			t.Errorf("%s's input schema: type %q, properties %v, required %v; want an object of %v, required %v",
				w.name, tool.InputSchema.Type, got, tool.InputSchema.Required, w.props, w.required)
		}
		if tool.OutputSchema == nil || tool.OutputSchema.Type != "object" {
			t.Errorf("%s has no object output schema: %+v", w.name, tool.OutputSchema)
		}
		if tool.Annotations.ReadOnlyHint != w.readOnly {
			t.Errorf("%s: readOnlyHint %v, want %v", w.name, tool.Annotations.ReadOnlyHint, w.readOnly)
		}
	}
	if t.Failed() {
		fatalf(t, r, "the listed tools are not the description's operations")
	}
	r.check("tools/list")
}

// petCalls calls both operations, then one with bad arguments.
func petCalls(ctx context.Context, t *testing.T, r *row, s *tsSession, api *petAPI) {
	t.Helper()
	calls := []struct {
		tool           string
		args           map[string]any
		wantLine       string         // the method and request URI the API got
		wantBody       map[string]any // the JSON body it got, if any
		wantStructured map[string]any
	}{
		{"pets_getPet", map[string]any{"petId": "rex-7", "include": "owner"}, "GET /v1/pets/rex-7?include=owner", nil,
			map[string]any{"id": "rex-7", "name": "Rex", "include": "owner"}},
		{"pets_createPet", map[string]any{"name": "Rex", "tag": "dog", "age": 3}, "POST /v1/pets", map[string]any{"name": "Rex", "tag": "dog", "age": 3.0},
			map[string]any{"id": "p-1", "name": "Rex", "tag": "dog", "age": 3.0}},
	}
	for _, c := range calls {
		n := len(api.requests())
		res, raw := petCall(ctx, t, r, s, c.tool, c.args)
		if res.IsError {
			fatalf(t, r, "%s: a tool error: %s", c.tool, raw)
		}
		got := api.requests()
		if len(got) != n+1 {
			fatalf(t, r, "%s: the API got %d requests, want 1", c.tool, len(got)-n)
		}
		req := got[n]
		if req.line != c.wantLine {
			t.Errorf("%s: the API got %s, want %s", c.tool, req.line, c.wantLine)
		}
		if req.auth != "Bearer "+petToken {
			t.Errorf("%s: the API got Authorization %q, want the configured one", c.tool, req.auth)
		}
		if c.wantBody != nil {
			var body map[string]any
			if err := json.Unmarshal([]byte(req.body), &body); err != nil || !reflect.DeepEqual(body, c.wantBody) || !strings.HasPrefix(req.contentType, "application/json") {
				t.Errorf("%s: the API got the body %s (%s), want %v as application/json", c.tool, req.body, req.contentType, c.wantBody)
			}
		}
		var structured map[string]any
		if err := json.Unmarshal(res.StructuredContent, &structured); err != nil || !reflect.DeepEqual(structured, c.wantStructured) {
			t.Errorf("%s: structuredContent %s, want %v", c.tool, res.StructuredContent, c.wantStructured)
		}
	}
	if t.Failed() {
		fatalf(t, r, "the calls did not reach the API as described")
	}
	r.check("tools/call")

	n := len(api.requests())
	res, raw := petCall(ctx, t, r, s, "pets_createPet", map[string]any{"age": "three"})
	if text := res.text(); !res.IsError || !strings.Contains(text, "name") || !strings.Contains(text, "age") {
		fatalf(t, r, "bad arguments: %s, want a tool error naming name and age", raw)
	}
	if got := api.requests(); len(got) != n {
		fatalf(t, r, "a call with bad arguments reached the API: %+v", got[n:])
	}
	r.check("tool error")
}

// petCall calls a tool and returns its result and the reply as it came.
func petCall(ctx context.Context, t *testing.T, r *row, s *tsSession, name string, args map[string]any) (*tsToolResult, json.RawMessage) {
	t.Helper()
	reply, err := s.d.do(ctx, map[string]any{"op": "callTool", "name": name, "arguments": args})
	if err != nil {
		fatalf(t, r, "%s: %v", name, err)
	}
	if strings.Contains(string(reply.Result), petToken) {
		t.Errorf("%s's result carries the API's credential: %s", name, reply.Result)
	}
	var res tsToolResult
	if err := json.Unmarshal(reply.Result, &res); err != nil {
		fatalf(t, r, "%s: %v in %s", name, err, reply.Result)
	}
	return &res, reply.Result
}
