package otelmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/otlptest"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcp/otelmcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

const waitFor = 10 * time.Second // a bound on a hang

// childEnv, set, makes the test binary a stdio MCP server that exports
// its spans to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.
const childEnv = "OTELMCP_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	os.Exit(m.Run())
}

func runChild() int {
	ctx := context.Background()
	tp, err := newTracerProvider(ctx, "", "upstream")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer tp.Shutdown(ctx)
	s := newServer(tp)
	if err := s.ServeStdio(ctx, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// newTracerProvider exports each span, as it ends, with the real OTLP/HTTP
// exporter: to endpoint, or where the OTEL_* variables say when it is "".
func newTracerProvider(ctx context.Context, endpoint, service string) (*sdktrace.TracerProvider, error) {
	var opts []otlptracehttp.Option
	if endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(endpoint+"/v1/traces"))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(
		sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(service))),
	), nil
}

// newServer is a server whose tools answer with what the server saw:
// "meta" with the traceparent in the request's _meta, "broken" with a
// tool error; its one prompt, greet, makes another a JSON-RPC error.
func newServer(tp trace.TracerProvider) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "traced", Version: "1"}, &mcp.ServerOptions{
		Middleware: []mcp.Middleware{otelmcp.ServerMiddleware(&otelmcp.Options{TracerProvider: tp})},
	})
	obj := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "meta", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tp, _ := req.Params.Meta["traceparent"].(string)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tp}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "broken", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}, IsError: true}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	return s
}

// transports are the ways the tests reach a server built by newServer.
var transports = []struct {
	name    string
	connect func(t *testing.T, recv *otlptest.Receiver, c *mcp.Client) *mcp.ClientSession
}{
	{"stdio", connectStdio},
	{"http", connectHTTP},
}

// connectStdio runs the server as a subprocess, over its stdin and
// stdout: no headers anywhere, so only _meta carries the context.
func connectStdio(t *testing.T, recv *otlptest.Receiver, c *mcp.Client) *mcp.ClientSession {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+recv.Endpoint()+"/v1/traces")
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// connectHTTP serves the server over real HTTP on loopback, with the
// W3C headers read and sent as well.
func connectHTTP(t *testing.T, recv *otlptest.Receiver, c *mcp.Client) *mcp.ClientSession {
	t.Helper()
	tp, err := newTracerProvider(context.Background(), recv.Endpoint(), "upstream")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	srv := httptest.NewServer(otelmcp.HTTPHandler(mcphttp.NewHandler(newServer(tp), nil), nil))
	t.Cleanup(srv.Close)
	cs, err := c.Connect(context.Background(), &mcphttp.ClientTransport{
		Endpoint:   srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: otelmcp.Transport(nil, nil)},
	})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// tracedClient is a client whose spans go to recv.
func tracedClient(t *testing.T, recv *otlptest.Receiver, version string) (*mcp.Client, *sdktrace.TracerProvider) {
	t.Helper()
	tp, err := newTracerProvider(context.Background(), recv.Endpoint(), "client")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ProtocolVersion: version,
		Middleware:      []mcp.ClientMiddleware{otelmcp.ClientMiddleware(&otelmcp.Options{TracerProvider: tp})},
	})
	return c, tp
}

// find returns the spans in trace with the name and kind.
func find(spans []otlptest.Span, trace, name, kind string) []otlptest.Span {
	var out []otlptest.Span
	for _, s := range spans {
		if s.TraceID == trace && s.Name == name && s.Kind == kind {
			out = append(out, s)
		}
	}
	return out
}

// pair waits for the client span and the server span of a call in the
// trace of the client's root span, and returns them.
func pair(t *testing.T, recv *otlptest.Receiver, root trace.SpanContext, name string) (client, server otlptest.Span) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		spans := recv.Spans()
		cs := find(spans, root.TraceID().String(), name, "client")
		ss := find(spans, root.TraceID().String(), name, "server")
		if len(cs) == 1 && len(ss) == 1 {
			return cs[0], ss[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s: %d client and %d server spans named %q, want 1 each; received %+v", root.TraceID(), len(cs), len(ss), name, spans)
		}
		recv.WaitFor(len(spans)+1, time.Until(deadline))
	}
}

func TestOneTraceFromTheClientSpanToTheServerSpan(t *testing.T) {
	for _, tr := range transports {
		for _, version := range []string{mcp.Version20251125, mcp.Version20260728} {
			t.Run(tr.name+"/"+version, func(t *testing.T) {
				recv := otlptest.NewReceiver(t)
				c, tp := tracedClient(t, recv, version)
				cs := tr.connect(t, recv, c)
				ctx, root := tp.Tracer("test").Start(context.Background(), "root")
				res, err := cs.CallTool(ctx, "meta", map[string]any{"secret": "hunter2"})
				root.End()
				if err != nil {
					t.Fatalf("call: %v", err)
				}
				client, server := pair(t, recv, root.SpanContext(), "tools/call meta")
				if client.ParentID != root.SpanContext().SpanID().String() {
					t.Errorf("client span's parent %q, want the root %s", client.ParentID, root.SpanContext().SpanID())
				}
				if server.ParentID != client.SpanID {
					t.Errorf("server span's parent %q, want the client span %s", server.ParentID, client.SpanID)
				}
				want := fmt.Sprintf("00-%s-%s-01", client.TraceID, client.SpanID)
				if got := res.Content[0].(*mcp.TextContent).Text; got != want {
					t.Errorf("the server's _meta.traceparent = %q, want %q", got, want)
				}
				for _, s := range []otlptest.Span{client, server} {
					for k, v := range map[string]string{
						"mcp.method.name":       "tools/call",
						"gen_ai.tool.name":      "meta",
						"gen_ai.operation.name": "execute_tool",
						"mcp.protocol.version":  version,
					} {
						if s.Attributes[k] != v {
							t.Errorf("%s span: %s = %q, want %q", s.Kind, k, s.Attributes[k], v)
						}
					}
					if s.Attributes["jsonrpc.request.id"] == "" {
						t.Errorf("%s span has no jsonrpc.request.id: %v", s.Kind, s.Attributes)
					}
					if s.StatusCode != "unset" || s.Attributes["error.type"] != "" {
						t.Errorf("%s span: status %s, error.type %q; want unset and none", s.Kind, s.StatusCode, s.Attributes["error.type"])
					}
					for k, v := range s.Attributes {
						if strings.Contains(v, "hunter2") {
							t.Errorf("%s span records the arguments in %s by default", s.Kind, k)
						}
					}
				}
				if tr.name == "http" && version == mcp.Version20251125 && server.Attributes["mcp.session.id"] == "" {
					t.Errorf("server span over HTTP has no mcp.session.id: %v", server.Attributes)
				}
			})
		}
	}
}

func TestErrorsSetStatusAndErrorType(t *testing.T) {
	tests := []struct {
		name, span string
		call       func(context.Context, *mcp.ClientSession) error
		errType    string
		code       string
	}{
		{
			name: "tool error", span: "tools/call broken",
			call: func(ctx context.Context, cs *mcp.ClientSession) error {
				res, err := cs.CallTool(ctx, "broken", nil)
				if err == nil && !res.IsError {
					return fmt.Errorf("the tool's result has no isError")
				}
				return err
			},
			errType: "tool_error",
		},
		{
			name: "JSON-RPC error", span: "prompts/get missing",
			call: func(ctx context.Context, cs *mcp.ClientSession) error {
				if _, err := cs.GetPrompt(ctx, "missing", nil); err == nil {
					return fmt.Errorf("a missing prompt was found")
				}
				return nil
			},
			errType: "-32602", code: "-32602",
		},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			recv := otlptest.NewReceiver(t)
			c, tp := tracedClient(t, recv, mcp.Version20251125)
			cs := tr.connect(t, recv, c)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					ctx, root := tp.Tracer("test").Start(context.Background(), "root")
					err := tt.call(ctx, cs)
					root.End()
					if err != nil {
						t.Fatal(err)
					}
					client, server := pair(t, recv, root.SpanContext(), tt.span)
					for _, s := range []otlptest.Span{client, server} {
						if s.StatusCode != "error" {
							t.Errorf("%s span: status %q, want error", s.Kind, s.StatusCode)
						}
						if s.Attributes["error.type"] != tt.errType {
							t.Errorf("%s span: error.type %q, want %q", s.Kind, s.Attributes["error.type"], tt.errType)
						}
						if s.Attributes["rpc.response.status_code"] != tt.code {
							t.Errorf("%s span: rpc.response.status_code %q, want %q", s.Kind, s.Attributes["rpc.response.status_code"], tt.code)
						}
					}
				})
			}
		})
	}
}

func TestTheServerContinuesTheTraceInTheHeadersWhenMetaHasNone(t *testing.T) {
	recv := otlptest.NewReceiver(t)
	tp, err := newTracerProvider(context.Background(), recv.Endpoint(), "client")
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Shutdown(context.Background())
	// No client middleware: the context travels in the headers only.
	c := mcp.NewClient(nil, &mcp.ClientOptions{ProtocolVersion: mcp.Version20251125})
	cs := connectHTTP(t, recv, c)
	ctx, root := tp.Tracer("test").Start(context.Background(), "root")
	res, err := cs.CallTool(ctx, "meta", nil)
	root.End()
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "" {
		t.Errorf("_meta.traceparent = %q, want none without the client middleware", got)
	}
	spans, err := recv.WaitFor(2, waitFor)
	if err != nil {
		t.Fatal(err)
	}
	ss := find(spans, root.SpanContext().TraceID().String(), "tools/call meta", "server")
	if len(ss) != 1 || ss[0].ParentID != root.SpanContext().SpanID().String() {
		t.Errorf("want one server span, child of the root in the headers; received %+v", spans)
	}
}

func TestWithTheGlobalNoopProviderCallsWorkAndCarryNoContext(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			recv := otlptest.NewReceiver(t)
			c := mcp.NewClient(nil, &mcp.ClientOptions{Middleware: []mcp.ClientMiddleware{otelmcp.ClientMiddleware(nil)}})
			cs := tr.connect(t, recv, c)
			res, err := cs.CallTool(context.Background(), "meta", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "" {
				t.Errorf("_meta.traceparent = %q, want none from a no-op tracer", got)
			}
			// The server's spans have no sampled parent and are exported
			// all the same; none comes from the client.
			for _, s := range recv.Spans() {
				if s.Kind == "client" || s.ParentID != "" {
					t.Errorf("span %+v: want only parentless server spans", s)
				}
			}
		})
	}
}

// The arguments are recorded only through the caller's redaction.
func TestRecordArgumentsRecordsWhatTheRedactionReturns(t *testing.T) {
	recv := otlptest.NewReceiver(t)
	tp, err := newTracerProvider(context.Background(), recv.Endpoint(), "client")
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Shutdown(context.Background())
	redact := func(tool string, args json.RawMessage) string {
		return tool + ":" + strings.ReplaceAll(string(args), "hunter2", "[REDACTED]")
	}
	c := mcp.NewClient(nil, &mcp.ClientOptions{Middleware: []mcp.ClientMiddleware{
		otelmcp.ClientMiddleware(&otelmcp.Options{TracerProvider: tp, RecordArguments: redact}),
	}})
	cs := connectHTTP(t, recv, c)
	if _, err := cs.CallTool(context.Background(), "meta", map[string]any{"password": "hunter2"}); err != nil {
		t.Fatal(err)
	}
	spans, err := recv.WaitFor(1, waitFor)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range spans {
		if s.Kind != "client" || s.Name != "tools/call meta" {
			continue
		}
		if got, want := s.Attributes["gen_ai.tool.call.arguments"], `meta:{"password":"[REDACTED]"}`; got != want {
			t.Errorf("gen_ai.tool.call.arguments = %q, want %q", got, want)
		}
		return
	}
	t.Errorf("no client span for tools/call meta in %+v", spans)
}
