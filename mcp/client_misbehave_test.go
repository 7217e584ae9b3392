package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer speaks just enough MCP to initialize and then answers each
// tools/call as the tool's name says, misbehaving on purpose.
func rawServer(t *testing.T, conn Conn) {
	for {
		data, err := conn.ReadMessage()
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(data, &m) != nil || m.ID == nil {
			continue
		}
		id := string(m.ID)
		reply := func(result string) {
			conn.WriteMessage([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}`))
		}
		ok := `{"content":[{"type":"text","text":"ok"}]}`
		switch m.Method {
		case "initialize":
			reply(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"0"}}`)
		case "ping":
			reply(`{}`)
		case "tools/call":
			switch m.Params.Name {
			case "garbage":
				conn.WriteMessage([]byte(`this is not json`))
				conn.WriteMessage([]byte(`{"jsonrpc":"2.0","id":`))
				conn.WriteMessage([]byte(`[1,2`))
				conn.WriteMessage([]byte(`{"jsonrpc":"2.0","id":` + id + `7,"result":{}}`))
				reply(ok)
			case "bad-envelope":
				conn.WriteMessage([]byte(`{"jsonrpc":"1.0","id":` + id + `,"result":{}}`))
			case "unknown-id":
				conn.WriteMessage([]byte(`{"jsonrpc":"2.0","id":424242,"result":{}}`))
			case "mistyped-id":
				conn.WriteMessage([]byte(`{"jsonrpc":"2.0","id":"` + id + `","result":` + ok + `}`))
			case "oversized-trailing-id":
				big := strings.Repeat("x", 5<<20)
				conn.WriteMessage([]byte(`{"result":{"content":[{"type":"text","text":"` + big + `"}]},"jsonrpc":"2.0","id":` + id + `}`))
			case "oversized-leading-id":
				big := strings.Repeat("x", 5<<20)
				conn.WriteMessage([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + big + `"}]}}`))
			case "malformed-result":
				reply(`{"content":"not an array"}`)
			case "never":
			default:
				reply(ok)
			}
		}
	}
}

// A misbehaving server fails only the call it misbehaves on; the session
// and the other calls go on.
func TestClientMisbehavingServer(t *testing.T) {
	defer checkGoroutines(t)()
	cc, sc := pipePair()
	go rawServer(t, sc)
	cs, err := NewClient(nil, &ClientOptions{RequestTimeout: 30 * time.Second, ProtocolVersion: LatestNegotiatedVersion}).Connect(context.Background(), ConnTransport{cc})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		sc.Close()
	}()
	if cs.ProtocolVersion() != Version20250618 {
		t.Errorf("negotiated %s", cs.ProtocolVersion())
	}
	tests := []struct {
		tool string
		want string // in the error; "" means the call succeeds
	}{
		{"garbage", ""},
		{"bad-envelope", "malformed response"},
		{"unknown-id", "timed out"},
		{"mistyped-id", `the id "`},
		{"oversized-trailing-id", "exceeds the 4194304-byte limit"},
		{"oversized-leading-id", "exceeds the 4194304-byte limit"},
		{"malformed-result", "result is malformed"},
		{"never", "timed out"},
		{"fine", ""},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			ctx := context.Background()
			if strings.Contains(tc.want, "timed out") {
				// Only these wait for a deadline; the others must fail
				// at once, long before the session's 30 s default.
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
			}
			res, err := cs.CallTool(ctx, tc.tool, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.want == "" && res.Content[0].(*TextContent).Text != "ok":
				t.Errorf("result %+v", res)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if err := cs.Ping(context.Background()); err != nil {
				t.Errorf("session broken after %s: %v", tc.tool, err)
			}
		})
	}
}

// A server that answers initialize with a revision we do not speak is
// refused with a message naming it.
func TestClientRefusesUnknownRevision(t *testing.T) {
	cc, sc := pipePair()
	defer sc.Close()
	go func() {
		for {
			data, err := sc.ReadMessage()
			if err != nil {
				return
			}
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			json.Unmarshal(data, &m)
			if m.ID != nil {
				sc.WriteMessage([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2099-01-01","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`))
			}
		}
	}()
	_, err := NewClient(nil, nil).Connect(context.Background(), ConnTransport{cc})
	if err == nil || !strings.Contains(err.Error(), `"2099-01-01"`) {
		t.Fatalf("got %v", err)
	}
}

// When the server's end of the connection goes away, calls in flight and
// later calls fail with ErrConnectionClosed instead of hanging.
func TestClientConnectionLost(t *testing.T) {
	defer checkGoroutines(t)()
	cc, sc := pipePair()
	go rawServer(t, sc)
	cs, err := NewClient(nil, &ClientOptions{RequestTimeout: -1, ProtocolVersion: LatestNegotiatedVersion}).Connect(context.Background(), ConnTransport{cc})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), "never", nil)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	sc.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrConnectionClosed) {
			t.Errorf("call in flight: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight hung")
	}
	<-cs.Done()
	if err := cs.Ping(context.Background()); !errors.Is(err, ErrConnectionClosed) {
		t.Errorf("later call: %v", err)
	}
	if !errors.Is(cs.Err(), ErrConnectionClosed) {
		t.Errorf("Err: %v", cs.Err())
	}
}

func ExampleClient() {
	// An in-process server for the example; real programs use a
	// CommandTransport or mcphttp.ClientTransport.
	s := NewServer(&Implementation{Name: "greeter", Version: "1"}, nil)
	AddTool(s, &Tool{Name: "greet", Description: "Say hello"}, func(_ context.Context, _ *CallToolRequest, in struct {
		Name string `json:"name"`
	}) (*CallToolResult, any, error) {
		return TextResult("Hello, " + in.Name + "!"), nil, nil
	})
	cc, sc := pipePair()
	go s.ServeConn(context.Background(), sc, nil)

	ctx := context.Background()
	cs, err := NewClient(&Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, ConnTransport{cc})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	for tool, err := range cs.Tools(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("tool:", tool.Name)
	}
	res, err := cs.CallTool(ctx, "greet", map[string]string{"name": "Ada"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*TextContent).Text)
	// Output:
	// tool: greet
	// Hello, Ada!
}

// Calls without parameters send no "params" member at all: strict servers
// (the TypeScript SDK's among them) reject "params":null.
func TestClientOmitsAbsentParams(t *testing.T) {
	cc, sc := pipePair()
	seen := make(chan string, 16)
	go func() {
		for {
			data, err := sc.ReadMessage()
			if err != nil {
				close(seen)
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(data, &m)
			seen <- string(data)
			if m.ID == nil {
				continue
			}
			result := `{}`
			switch m.Method {
			case "initialize":
				result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{},"prompts":{}},"serverInfo":{"name":"raw","version":"0"}}`
			case "tools/list":
				result = `{"tools":[]}`
			case "resources/list":
				result = `{"resources":[]}`
			case "resources/templates/list":
				result = `{"resourceTemplates":[]}`
			case "prompts/list":
				result = `{"prompts":[]}`
			}
			sc.WriteMessage([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
		}
	}()
	ctx := context.Background()
	cs, err := NewClient(nil, nil).Connect(ctx, ConnTransport{cc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListPrompts(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := cs.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	for msg := range seen {
		if strings.Contains(msg, `"params":null`) {
			t.Errorf("sent %s", msg)
		}
	}
}

// A session-era server that never answers the server/discover probe is spoken
// to with initialize once the probe times out; one that answers with an
// error at once costs no wait.
// sessionEraServer is a 2025-06-18 server on conn that knows nothing of
// server/discover: it ignores it when silent, else answers -32601; each
// probe it sees is counted in probes.
func sessionEraServer(conn Conn, silent bool, probes *atomic.Int32) {
	for {
		data, err := conn.ReadMessage()
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(data, &m)
		switch m.Method {
		case "server/discover":
			probes.Add(1)
			if !silent {
				conn.WriteMessage([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`))
			}
		case "initialize":
			conn.WriteMessage([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}}`))
		}
	}
}

func TestClientProbeFallback(t *testing.T) {
	for _, silent := range []bool{true, false} {
		cc, sc := pipePair()
		go sessionEraServer(sc, silent, new(atomic.Int32))
		cs, err := NewClient(nil, &ClientOptions{ProbeTimeout: 200 * time.Millisecond}).Connect(context.Background(), ConnTransport{cc})
		if err != nil {
			t.Fatalf("silent %v: %v", silent, err)
		}
		if cs.ProtocolVersion() != Version20250618 {
			t.Errorf("silent %v: negotiated %q", silent, cs.ProtocolVersion())
		}
		cs.Close()
		sc.Close()
	}
}

type keyedTransport struct {
	ConnTransport
	key string
}

func (k keyedTransport) ServerKey() string { return k.key }

// A Client remembers a server that did not answer the probe: connecting
// to it again goes straight to initialize.
func TestClientRemembersSessionEraServers(t *testing.T) {
	client := NewClient(nil, &ClientOptions{ProbeTimeout: 100 * time.Millisecond})
	var probes atomic.Int32
	for range 2 {
		cc, sc := pipePair()
		go sessionEraServer(sc, true, &probes)
		cs, err := client.Connect(context.Background(), keyedTransport{ConnTransport{cc}, "old-server"})
		if err != nil {
			t.Fatal(err)
		}
		cs.Close()
		sc.Close()
	}
	if n := probes.Load(); n != 1 {
		t.Errorf("%d probes, want 1", n)
	}
}

// Objects from a server that are no request, notification or response
// ({} or {"jsonrpc":"2.0"}, alone or in a batch) are logged and dropped:
// a client never answers them, and the session goes on.
func TestClientDropsServerObjectsThatAreNoMessages(t *testing.T) {
	defer checkGoroutines(t)()
	cc, sc := pipePair()
	defer sc.Close()
	next := make(chan string, 1)
	go func() {
		data, err := sc.ReadMessage()
		if err != nil {
			return
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(data, &m)
		sc.WriteMessage([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`))
		if _, err := sc.ReadMessage(); err != nil { // notifications/initialized
			return
		}
		for _, msg := range []string{`{}`, `{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","method":5}`, `[{},{"jsonrpc":"2.0"}]`, `{"jsonrpc":"2.0","id":"srv","method":"ping"}`} {
			sc.WriteMessage([]byte(msg))
		}
		// The client handles its input in order: were it to answer what
		// came before the ping, that would come first.
		data, _ = sc.ReadMessage()
		next <- string(data)
	}()
	var logs logBuffer
	cs, err := NewClient(nil, &ClientOptions{ProtocolVersion: Version20250326, Logger: slog.New(slog.NewTextHandler(&logs, nil))}).Connect(context.Background(), ConnTransport{cc})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	select {
	case got := <-next:
		if got != `{"jsonrpc":"2.0","id":"srv","result":{}}` {
			t.Errorf("the client's first message after the objects: %s, want the ping's answer", got)
		}
	case <-time.After(waitFor):
		t.Fatal("the client did not answer the server's ping")
	}
	if !strings.Contains(logs.String(), "dropped a malformed message from the server") {
		t.Errorf("nothing logged:\n%s", logs.String())
	}
}

// A server slow to start answers the server/discover probe after the
// client has given up on it and gone on with initialize: the late answer
// is no stray response, and is not warned about (issue 20: a cold npx
// start logged "dropped a response whose id matches no request").
func TestLateProbeAnswerIsNotAStray(t *testing.T) {
	defer checkGoroutines(t)()
	cc, sc := pipePair()
	go func() {
		var probe json.RawMessage
		for {
			data, err := sc.ReadMessage()
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(data, &m)
			switch m.Method {
			case "server/discover":
				probe = m.ID // answered late, after initialize
			case "initialize":
				sc.WriteMessage([]byte(`{"jsonrpc":"2.0","id":` + string(probe) + `,"error":{"code":-32601,"message":"Method not found"}}`))
				sc.WriteMessage([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"slow","version":"0"}}}`))
			case "ping":
				sc.WriteMessage([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`))
			}
		}
	}()
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(b)
	}), &slog.HandlerOptions{Level: slog.LevelWarn}))
	cs, err := NewClient(nil, &ClientOptions{ProbeTimeout: 50 * time.Millisecond, Logger: logger}).Connect(context.Background(), ConnTransport{cc})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		sc.Close()
	}()
	if err := cs.Ping(context.Background()); err != nil { // after the late answer
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), "matches no request") {
		t.Errorf("the late probe answer was warned about:\n%s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
