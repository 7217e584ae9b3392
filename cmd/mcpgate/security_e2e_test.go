package main

import (
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// These tests hold the HTTP server's defences against hostile callers
// (issue 19): the binary, over real HTTP on loopback.

const initJSON = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// post sends an initialize to url with the given headers; "Host" sets the
// request's host.
func post(t *testing.T, url string, headers map[string]string) httpReply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(initJSON))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return httpReply{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpReply{resp.StatusCode, resp.Header, string(b), resp.Header.Get("Mcp-Session-Id")}
}

// A request under a foreign Host or Origin (DNS rebinding) is refused as
// such, 403, before authentication asks it for credentials.
func TestHTTPForeignHostRefusedBeforeAuth(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys")
	if out, err := exec.Command(binary, "auth", "new-key", "ci", "--append", keys).CombinedOutput(); err != nil {
		t.Fatalf("new-key: %v %s", err, out)
	}
	p := startHTTP(t, "--auth-keys", keys)
	for _, tt := range []struct {
		name    string
		headers map[string]string
		status  int
		says    string
	}{
		{"foreign host", map[string]string{"Host": "evil.example"}, 403, `host \"evil.example\" is not allowed`},
		{"foreign host with a key", map[string]string{"Host": "evil.example:80", "Authorization": "Bearer mcpg_guess"}, 403, "not allowed"},
		{"foreign origin", map[string]string{"Origin": "https://evil.example"}, 403, `origin \"https://evil.example\" is not allowed`},
		{"loopback, no key", nil, 401, "authentication is required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, p.url, tt.headers)
			if r.status != tt.status || !strings.Contains(r.body, tt.says) {
				t.Errorf("%d %s, want %d saying %s", r.status, r.body, tt.status, tt.says)
			}
			if tt.status == 403 && r.header.Get("Www-Authenticate") != "" {
				t.Errorf("a foreign host was asked for credentials: %q", r.header.Get("Www-Authenticate"))
			}
		})
	}
}
