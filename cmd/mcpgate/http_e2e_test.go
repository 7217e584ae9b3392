package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"

	"io"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// httpProc is `mcpgate serve` on a loopback port chosen by the kernel.
type httpProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	exited chan error

	mu     sync.Mutex
	stderr bytes.Buffer
}

func startHTTP(t *testing.T, args ...string) *httpProc {
	t.Helper()
	return startHTTPEnv(t, nil, args...)
}

// startHTTPEnv is startHTTP with extra environment.
func startHTTPEnv(t *testing.T, env []string, args ...string) *httpProc {
	t.Helper()
	args = append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "tasks.db")}, args...)
	cmd := exec.Command(binary, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &httpProc{t: t, cmd: cmd, exited: make(chan error, 1)}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			p.mu.Unlock()
			if u, ok := strings.CutPrefix(line, "mcpgate is listening on "); ok {
				urlc <- u
			}
		}
		p.exited <- cmd.Wait()
	}()
	// Kill, not a look at ProcessState: that is written by Wait in the
	// reader goroutine. Killing a process that has exited is harmless.
	t.Cleanup(func() { cmd.Process.Kill() })
	select {
	case p.url = <-urlc:
	case err := <-p.exited:
		t.Fatalf("mcpgate exited (%v) before listening:\n%s", err, p.log())
	case <-time.After(waitFor):
		t.Fatalf("mcpgate did not start listening:\n%s", p.log())
	}
	return p
}

func (p *httpProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

type httpReply struct {
	status  int
	header  http.Header
	body    string
	session string
}

// curl sends one request the way a user would with curl: with the real
// curl when it is installed, else with net/http and the same headers.
func curl(t *testing.T, method, url string, headers map[string]string, body string) httpReply {
	t.Helper()
	if path, err := exec.LookPath("curl"); err == nil {
		dir := t.TempDir()
		hdrFile, bodyFile := filepath.Join(dir, "headers"), filepath.Join(dir, "body")
		args := []string{"-sS", "--max-time", "20", "-D", hdrFile, "-o", bodyFile, "-X", method, url}
		for k, v := range headers {
			args = append(args, "-H", k+": "+v)
		}
		if body != "" {
			args = append(args, "--data-binary", body)
		}
		if out, err := exec.Command(path, args...).CombinedOutput(); err != nil {
			t.Fatalf("curl %v: %v %s", args, err, out)
		}
		hdr, _ := os.ReadFile(hdrFile)
		b, _ := os.ReadFile(bodyFile)
		tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(hdr)))
		statusLine, err := tp.ReadLine()
		if err != nil {
			t.Fatalf("curl headers: %v %q", err, hdr)
		}
		var status int
		if f := strings.Fields(statusLine); len(f) >= 2 {
			status, _ = strconv.Atoi(f[1])
		}
		mh, _ := tp.ReadMIMEHeader()
		h := http.Header(mh)
		return httpReply{status, h, string(b), h.Get("Mcp-Session-Id")}
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "*/*") // curl's default
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpReply{resp.StatusCode, resp.Header, string(b), resp.Header.Get("Mcp-Session-Id")}
}

// rpcResult decodes a JSON reply, or the data line of an SSE reply.
func rpcResult(t *testing.T, r httpReply) map[string]any {
	t.Helper()
	body := r.body
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		for _, l := range strings.Split(body, "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok && strings.Contains(d, `"id"`) {
				body = d
			}
		}
	}
	var msg struct {
		Result map[string]any
		Error  any
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.Result == nil {
		t.Fatalf("status %d: not a result: %s", r.status, r.body)
	}
	return msg.Result
}

// The sequence the README shows a new user.
func TestHTTPCurlSequence(t *testing.T) {
	p := startHTTP(t)
	if !strings.HasPrefix(p.url, "http://127.0.0.1:") || !strings.HasSuffix(p.url, "/mcp") {
		t.Fatalf("url %q", p.url)
	}
	// The line follows the one startHTTP waits for: it may still be in
	// the pipe.
	want := `client config: {"mcpServers":{"mcpgate":{"type":"http","url":"` + p.url + `"}}}`
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.log(), want) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(p.log(), want) {
		t.Errorf("no client config line in:\n%s", p.log())
	}
	json := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	r := curl(t, "POST", p.url, json, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"8"}}}`)
	if r.status != 200 || r.session == "" {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	if v := rpcResult(t, r)["protocolVersion"]; v != "2025-11-25" {
		t.Fatalf("protocolVersion %v", v)
	}
	withSession := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": r.session, "MCP-Protocol-Version": "2025-11-25"}
	r = curl(t, "POST", p.url, withSession, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if r.status != 202 || r.body != "" {
		t.Fatalf("initialized: %d %q", r.status, r.body)
	}
	r = curl(t, "POST", p.url, withSession, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if r.status != 200 || !strings.Contains(r.body, `"create_task"`) {
		t.Fatalf("tools/list: %d %s", r.status, r.body)
	}
	r = curl(t, "POST", p.url, withSession, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_task","arguments":{"title":"Try mcpgate"}}}`)
	res := rpcResult(t, r)
	if res["isError"] == true || !strings.Contains(r.body, "Try mcpgate") {
		t.Fatalf("tools/call: %d %s", r.status, r.body)
	}
	// Without the protocol-version header and with curl's default Accept
	// (*/*), as someone trying things by hand would send.
	r = curl(t, "POST", p.url, map[string]string{"Content-Type": "application/json", "Mcp-Session-Id": withSession["Mcp-Session-Id"]}, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_tasks","arguments":{}}}`)
	if r.status != 200 || !strings.Contains(r.body, "Try mcpgate") {
		t.Fatalf("list_tasks: %d %s", r.status, r.body)
	}
	r = curl(t, "DELETE", p.url, map[string]string{"Mcp-Session-Id": withSession["Mcp-Session-Id"]}, "")
	if r.status != 200 && r.status != 204 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	r = curl(t, "POST", p.url, withSession, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	if r.status != 404 {
		t.Fatalf("after DELETE: %d, want 404", r.status)
	}
}

// What the mcp-remote bridge probes before it connects must not look like
// an OAuth-protected server when auth is off.
func TestHTTPNoAuthProbes(t *testing.T) {
	p := startHTTP(t)
	base := strings.TrimSuffix(p.url, "/mcp")
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"} {
		if r := curl(t, "GET", base+path, nil, ""); r.status != 404 {
			t.Errorf("GET %s: %d, want 404", path, r.status)
		}
	}
	if r := curl(t, "GET", p.url, map[string]string{"Accept": "text/event-stream"}, ""); r.status != 400 && r.status != 405 {
		t.Errorf("GET without a session: %d, want 400 or 405", r.status)
	}
}

func TestHTTPAPIKeyFromFlags(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys")
	out, err := exec.Command(binary, "auth", "new-key", "ci", "--append", keys).Output()
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(out))
	if st, err := os.Stat(keys); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", err, st)
	}
	if b, _ := os.ReadFile(keys); strings.Contains(string(b), key) {
		t.Fatal("the key file holds the key itself")
	}
	p := startHTTP(t, "--auth-keys", keys)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"8"}}}`
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	if r := curl(t, "POST", p.url, h, init); r.status != 401 || !strings.HasPrefix(r.header.Get("Www-Authenticate"), "Bearer") {
		t.Fatalf("without the key: %d %q", r.status, r.header.Get("Www-Authenticate"))
	}
	h["Authorization"] = "Bearer " + key
	if r := curl(t, "POST", p.url, h, init); r.status != 200 {
		t.Fatalf("with the key: %d %s", r.status, r.body)
	}
	if strings.Contains(p.log(), key) {
		t.Fatal("the key appears in the log")
	}
}

func TestHTTPBasicFromFlags(t *testing.T) {
	cmd := exec.Command(binary, "auth", "hash-password", "alice")
	cmd.Stdin = strings.NewReader("s3cret pass\n")
	line, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(line), "alice:$2") {
		t.Fatalf("hash-password: %v %q", err, line)
	}
	users := filepath.Join(t.TempDir(), "users")
	os.WriteFile(users, line, 0o600)
	p := startHTTP(t, "--auth-users", users)
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	ping := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"8"}}}`
	if r := curl(t, "POST", p.url, h, ping); r.status != 401 || !strings.HasPrefix(r.header.Get("Www-Authenticate"), "Basic") {
		t.Fatalf("without credentials: %d %q", r.status, r.header.Get("Www-Authenticate"))
	}
	h["Authorization"] = "Basic YWxpY2U6czNjcmV0IHBhc3M=" // alice:s3cret pass
	if r := curl(t, "POST", p.url, h, ping); r.status != 200 {
		t.Fatalf("with credentials: %d %s", r.status, r.body)
	}
}

func TestServeRefusesOpenAddressWithoutAuth(t *testing.T) {
	out, err := exec.Command(binary, "serve", "--addr", "0.0.0.0:0", "--db", filepath.Join(t.TempDir(), "t.db")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--auth-keys") || !strings.Contains(string(out), "0.0.0.0:0") {
		t.Fatalf("serve on 0.0.0.0 without auth: %v %s", err, out)
	}
	for _, bad := range [][]string{
		{"--scope-for", "tools/call"},
		{"--oauth-issuer", "https://as.example", "--scope-for", "tools/call"},
		{"--oauth-scope", "x"},
		{"--auth-keys", "/nonexistent/keys"},
	} {
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "t.db")}, bad...)
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		out, err := exec.CommandContext(ctx, binary, args...).CombinedOutput()
		hung := ctx.Err() != nil
		cancel()
		if err == nil || hung {
			t.Errorf("serve %v started: %s", bad, out)
		}
	}
}

func TestHTTPSignalShutsDown(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			p := startHTTP(t)
			// An open GET stream must not hold the shutdown up.
			r := curl(t, "POST", p.url, map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			req, _ := http.NewRequest("GET", p.url, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", r.session)
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("GET stream: %v %v", err, resp)
			}
			done := make(chan struct{})
			go func() { io.Copy(io.Discard, resp.Body); close(done) }()
			p.cmd.Process.Signal(sig)
			select {
			case err := <-p.exited:
				if err != nil {
					t.Fatalf("exit: %v\n%s", err, p.log())
				}
			case <-time.After(waitFor):
				t.Fatalf("mcpgate did not exit:\n%s", p.log())
			}
			select {
			case <-done:
			case <-time.After(waitFor):
				t.Fatal("the GET stream stayed open after exit")
			}
			if _, err := http.Post(p.url, "application/json", strings.NewReader("{}")); err == nil {
				t.Fatal("still accepting connections after exit")
			}
		})
	}
}
