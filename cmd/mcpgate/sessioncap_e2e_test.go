package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// --max-sessions-per-principal (or its variable) reaches the handler: at
// a cap of 1 a caller's second session ends its first, idle one.
func TestServeMaxSessionsPerPrincipal(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		args []string
	}{
		{"flag", nil, []string{"--max-sessions-per-principal", "1"}},
		{"environment", []string{"MCPGATE_MAX_SESSIONS_PER_PRINCIPAL=1"}, nil},
		{"flag over environment", []string{"MCPGATE_MAX_SESSIONS_PER_PRINCIPAL=50"}, []string{"--max-sessions-per-principal", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startHTTPEnv(t, tt.env, tt.args...)
			json := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
			init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"8"}}}`
			var sessions []string
			for range 2 {
				r := curl(t, "POST", p.url, json, init)
				if r.status != 200 || r.session == "" {
					t.Fatalf("initialize: %d %s", r.status, r.body)
				}
				sessions = append(sessions, r.session)
			}
			for i, want := range []int{404, 200} {
				r := curl(t, "POST", p.url, map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": sessions[i]},
					`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
				if r.status != want {
					t.Errorf("session %d: ping got %d %s, want %d", i+1, r.status, r.body, want)
				}
			}
		})
	}
}

func TestServeRefusesABadSessionCapVariable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "t.db"))
	cmd.Env = append(os.Environ(), "MCPGATE_MAX_SESSIONS_PER_PRINCIPAL=lots")
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil || !strings.Contains(string(out), `MCPGATE_MAX_SESSIONS_PER_PRINCIPAL="lots"`) {
		t.Fatalf("serve with MCPGATE_MAX_SESSIONS_PER_PRINCIPAL=lots: %v %s", err, out)
	}
}
