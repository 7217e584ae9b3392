package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// peer is a test client speaking to a server over real OS pipes.
type peer struct {
	t      *testing.T
	in     *os.File // the server's stdin, written by the test
	msgs   chan []byte
	served chan error
	nextID atomic.Int64
}

// msg is a decoded message as the test sees it.
type msg struct {
	Raw    string
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

const waitFor = 10 * time.Second // a bound on a hang, never a timing assertion

func startPeer(t *testing.T, s *Server, opts *ServeOptions) *peer {
	t.Helper()
	sin, cin, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cout, sout, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{t: t, in: cin, msgs: make(chan []byte, 1024), served: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	max := 0
	if opts != nil {
		max = opts.MaxMessageSize
	}
	go func() {
		p.served <- s.ServeConn(ctx, NewStdioConn(sin, sout, max), opts)
		sout.Close()
	}()
	go func() {
		lr := jsonrpc.NewLineReader(cout, 64<<20)
		for {
			line, err := lr.Read()
			if err != nil {
				close(p.msgs)
				return
			}
			p.msgs <- line
		}
	}()
	t.Cleanup(func() {
		cancel()
		cin.Close()
		select {
		case <-p.served:
		case <-time.After(waitFor):
			t.Error("server did not stop")
		}
	})
	return p
}

func (p *peer) send(format string, args ...any) {
	p.t.Helper()
	line := fmt.Sprintf(format, args...)
	if _, err := p.in.Write([]byte(line + "\n")); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// recv returns the next message from the server.
func (p *peer) recv() *msg {
	p.t.Helper()
	select {
	case line, ok := <-p.msgs:
		if !ok {
			p.t.Fatal("server closed its output")
		}
		var m msg
		if len(line) > 0 && line[0] == '[' {
			if !json.Valid(line) {
				p.t.Fatalf("server sent invalid JSON %q", line)
			}
			return &msg{Raw: string(line)}
		}
		if err := json.Unmarshal(line, &m); err != nil {
			p.t.Fatalf("server sent invalid JSON %q: %v", line, err)
		}
		m.Raw = string(line)
		return &m
	case <-time.After(waitFor):
		p.t.Fatal("no message from the server")
		return nil
	}
}

// recvResponse skips notifications until a response (or request) arrives.
func (p *peer) recvResponse() *msg {
	p.t.Helper()
	for {
		m := p.recv()
		if m.ID != nil {
			return m
		}
	}
}

// call sends a request with a fresh integer id and returns its response,
// skipping notifications.
func (p *peer) call(method string, params string) *msg {
	p.t.Helper()
	id := p.nextID.Add(1) + 1000
	if params == "" {
		p.send(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method)
	} else {
		p.send(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	}
	m := p.recvResponse()
	if string(m.ID) != fmt.Sprint(id) {
		p.t.Fatalf("response id %s, want %d: %s", m.ID, id, m.Raw)
	}
	return m
}

// result calls method and decodes its result into v, failing on an error.
func (p *peer) result(method, params string, v any) {
	p.t.Helper()
	m := p.call(method, params)
	if m.Error != nil {
		p.t.Fatalf("%s: error %d %s", method, m.Error.Code, m.Error.Message)
	}
	if v != nil {
		if err := json.Unmarshal(m.Result, v); err != nil {
			p.t.Fatalf("%s result %s: %v", method, m.Result, err)
		}
	}
}

// rpcError calls method and returns its error code and message.
func (p *peer) rpcError(method, params string) (int64, string) {
	p.t.Helper()
	m := p.call(method, params)
	if m.Error == nil {
		p.t.Fatalf("%s: want an error, got %s", method, m.Raw)
	}
	return m.Error.Code, m.Error.Message
}

func (p *peer) initialize(version string, caps string) json.RawMessage {
	p.t.Helper()
	if caps == "" {
		caps = "{}"
	}
	m := p.call("initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"test","version":"1"}}`, version, caps))
	if m.Error != nil {
		p.t.Fatalf("initialize: %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m.Result
}

// expectQuiet checks that nothing was sent for the messages before it:
// a ping is answered in order, so if the next message is the ping's
// answer, nothing came before it.
func (p *peer) expectQuiet() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"quiet-check","method":"ping"}`)
	m := p.recv()
	if string(m.ID) != `"quiet-check"` {
		p.t.Fatalf("expected nothing before the ping's answer, got %s", m.Raw)
	}
}

func contains(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}
