package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tsDriver is one Node process running node/ts-client.mjs: the TypeScript
// SDK's client (1.x, or v2 with --v2), driven line by line over the
// process's stdin and stdout. One driver serves many sessions, one after the
// other, to spare Node's start-up.
type tsDriver struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *tailBuffer
	mu     sync.Mutex
	nextID int
}

func startTSDriver(t *testing.T, args ...string) *tsDriver {
	t.Helper()
	cmd := exec.Command(env.node, append([]string{filepath.Join(env.dir, "node", "ts-client.mjs")}, args...)...)
	cmd.SysProcAttr = sysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &tsDriver{cmd: cmd, stdin: stdin, lines: make(chan []byte, 16), stderr: newTailBuffer()}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(d.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			d.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	return d
}

// tsReply is the driver's answer to one command.
type tsReply struct {
	ID           int             `json:"id"`
	OK           bool            `json:"ok"`
	Error        string          `json:"error"`
	Stderr       string          `json:"stderr"`
	Result       json.RawMessage `json:"result"`
	Progress     []progressEvent `json:"progress"`
	Late         []progressEvent `json:"late"`
	Negotiated   string          `json:"negotiated"`
	Offered      string          `json:"offered"`
	Era          string          `json:"era"`    // v2: legacy or modern (the TS SDK's names)
	Method       string          `json:"method"` // what ping sent
	ServerInfo   struct{ Name string }
	ClientErrors []string `json:"clientErrors"`
	// Elicitations are the elicitation/create requests the server sent
	// during a callTool (with the target's elicit answer set).
	Elicitations []struct{ Message string } `json:"elicitations"`
}

// do sends one command and waits for its answer.
func (d *tsDriver) do(ctx context.Context, cmd map[string]any) (*tsReply, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextID++
	cmd["id"] = d.nextID
	b, _ := json.Marshal(cmd)
	if _, err := d.stdin.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("the TS driver is gone (%v); its stderr: %s", err, d.stderr)
	}
	for {
		select {
		case line, ok := <-d.lines:
			if !ok {
				return nil, fmt.Errorf("the TS driver exited; its stderr: %s", d.stderr)
			}
			var r tsReply
			if json.Unmarshal(line, &r) != nil || r.ID != d.nextID {
				continue // not an answer of ours: ignore
			}
			if !r.OK {
				err := errors.New(r.Error)
				if r.Stderr != "" {
					err = fmt.Errorf("%w (the server's stderr: %s)", err, r.Stderr)
				}
				return &r, err
			}
			return &r, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: no answer from the TS driver: %w", cmd["op"], ctx.Err())
		}
	}
}

// tsSession is a session of the TypeScript SDK's client.
type tsSession struct {
	d          *tsDriver
	negotiated string
	era        string
	server     string
	closed     bool
	// clientErrors is what the SDK reported through onerror, known once
	// the session is closed.
	clientErrors []string
	notes        []string
}

type tsTarget struct {
	transport string // stdio, http or sse
	command   string
	args      []string
	env       map[string]string
	url       string
	// negotiation is the v2 client's versionNegotiation mode: legacy (its
	// default), auto or pin (2026-07-28).
	negotiation string
	// elicit, when set, has the 1.x client declare elicitation and answer
	// every request with it ({action, content}).
	elicit map[string]any
}

func (d *tsDriver) connect(ctx context.Context, tgt tsTarget, version string) (*tsSession, error) {
	cmd := map[string]any{"op": "connect", "transport": tgt.transport, "command": tgt.command, "args": tgt.args, "env": tgt.env, "url": tgt.url}
	if version != "" {
		cmd["protocolVersion"] = version
	}
	if tgt.negotiation != "" {
		cmd["negotiation"] = tgt.negotiation
	}
	if tgt.elicit != nil {
		cmd["elicit"] = tgt.elicit
	}
	r, err := d.do(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return &tsSession{d: d, negotiated: r.Negotiated, era: r.Era, server: r.ServerInfo.Name}, nil
}

func (s *tsSession) Negotiated() string { return s.negotiated }
func (s *tsSession) ServerName() string { return s.server }

// PingMethod: the v2 client at 2026-07-28, which has no ping, checks the
// server is there with server/discover instead.
func (s *tsSession) PingMethod() string {
	if s.era == "modern" {
		return "server/discover"
	}
	return "ping"
}

func (s *tsSession) ListTools(ctx context.Context) ([]string, error) {
	r, err := s.d.do(ctx, map[string]any{"op": "listTools"})
	if err != nil {
		return nil, err
	}
	var res struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return nil, err
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	return names, nil
}

type tsContent struct {
	Type string
	Text string
}

func tsTexts(cs []tsContent) []string {
	var texts []string
	for _, c := range cs {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	return texts
}

func (s *tsSession) callTool(ctx context.Context, name string, args map[string]any, progress bool) (*toolResult, []progressEvent, error) {
	if args == nil {
		args = map[string]any{}
	}
	r, err := s.d.do(ctx, map[string]any{"op": "callTool", "name": name, "arguments": args, "progress": progress})
	if err != nil {
		return nil, nil, err
	}
	var res struct {
		Content []tsContent
		IsError bool
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return nil, nil, err
	}
	prog := r.Progress
	if len(r.Late) > 0 {
		// Sent before the response, delivered after it by the SDK (see
		// ts-client.mjs): count them, and say so in the matrix.
		prog = append(prog, r.Late...)
		s.notes = append(s.notes, "the TS SDK reported the last progress via onerror (it dispatches notifications after a response read with them)")
	}
	return &toolResult{Texts: tsTexts(res.Content), IsError: res.IsError}, prog, nil
}

func (s *tsSession) Notes() []string { return s.notes }

func (s *tsSession) CallTool(ctx context.Context, name string, args map[string]any) (*toolResult, error) {
	res, _, err := s.callTool(ctx, name, args, false)
	return res, err
}

func (s *tsSession) CallToolProgress(ctx context.Context, name string, args map[string]any) (*toolResult, []progressEvent, error) {
	return s.callTool(ctx, name, args, true)
}

func (s *tsSession) CancelAtFirstProgress(ctx context.Context, name string, args map[string]any) error {
	_, err := s.d.do(ctx, map[string]any{"op": "cancel", "name": name, "arguments": args})
	return err
}

func (s *tsSession) ReadResource(ctx context.Context, uri string) ([]string, error) {
	r, err := s.d.do(ctx, map[string]any{"op": "readResource", "uri": uri})
	if err != nil {
		return nil, err
	}
	var res struct{ Contents []struct{ Text string } }
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return nil, err
	}
	var texts []string
	for _, c := range res.Contents {
		texts = append(texts, c.Text)
	}
	return texts, nil
}

func (s *tsSession) GetPrompt(ctx context.Context, name string, args map[string]string) ([]string, error) {
	r, err := s.d.do(ctx, map[string]any{"op": "getPrompt", "name": name, "arguments": args})
	if err != nil {
		return nil, err
	}
	var res struct{ Messages []struct{ Content tsContent } }
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return nil, err
	}
	var texts []string
	for _, m := range res.Messages {
		if m.Content.Type == "text" {
			texts = append(texts, m.Content.Text)
		}
	}
	return texts, nil
}

func (s *tsSession) Ping(ctx context.Context) error {
	r, err := s.d.do(ctx, map[string]any{"op": "ping"})
	if err != nil {
		return err
	}
	if r.Method != s.PingMethod() {
		return fmt.Errorf("the driver sent %s, want %s", r.Method, s.PingMethod())
	}
	return nil
}

func (s *tsSession) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	r, err := s.d.do(ctx, map[string]any{"op": "close"})
	if err != nil {
		return err
	}
	s.clientErrors = r.ClientErrors
	if len(r.Late) > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%d progress notification(s) arrived for no call in flight", len(r.Late)))
	}
	return nil
}
