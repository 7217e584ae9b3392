package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Through the real binary over HTTP with API keys: a tenant that sees
// only alpha, and a key in no tenant, get for each thing of beta they
// name (a tool, prompt, resource, template completion, subscription)
// the answer they get for a server that does not exist; a tenant that
// sees beta reaches it. Issue 19, finding 1 (the completion of a
// ref/resource naming another tenant's server reached that server).
func TestGatewayBinaryTenantIsolation(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	key := func(name string) string {
		out, err := exec.Command(binary, "auth", "new-key", name, "--append", keys).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	aliceKey, bobKey, carolKey := key("alice"), key("bob"), key("carol")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fixture := map[string]any{"command": exe, "env": map[string]string{fixtureEnv: "stdio"}, "start": "eager"}
	cfg, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"alpha": fixture, "beta": fixture},
		"tenants": map[string]any{
			"acme":   map[string]any{"principals": []string{"apikey:alice"}, "servers": []string{"alpha"}},
			"globex": map[string]any{"principals": []string{"apikey:bob"}},
		},
	})
	file := filepath.Join(dir, "gateway.json")
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startHTTP(t, "--config", file, "--auth-keys", keys)
	connect := func(k string) *mcp.ClientSession {
		cs, err := mcp.NewClient(nil, &mcp.ClientOptions{ProtocolVersion: "2025-11-25"}).Connect(context.Background(),
			&mcphttp.ClientTransport{Endpoint: p.url, Header: http.Header{"Authorization": {"Bearer " + k}}, DisableLegacyFallback: true})
		if err != nil {
			t.Fatalf("%v\n%s", err, p.log())
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	ctx := context.Background()
	complete := func(cs *mcp.ClientSession, ref *mcp.CompleteReference, arg string) (any, error) {
		return cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteArgument{Name: arg, Value: "x"}})
	}
	asks := map[string]func(cs *mcp.ClientSession, server string) (any, error){
		"tools/call": func(cs *mcp.ClientSession, s string) (any, error) {
			return cs.CallTool(ctx, s+"_echo", map[string]string{"message": "x"})
		},
		"prompts/get": func(cs *mcp.ClientSession, s string) (any, error) {
			return cs.GetPrompt(ctx, s+"_greet", map[string]string{"name": "x"})
		},
		"resources/read": func(cs *mcp.ClientSession, s string) (any, error) {
			return cs.ReadResource(ctx, s+"+file:///readme.txt")
		},
		"completion of a prompt": func(cs *mcp.ClientSession, s string) (any, error) {
			return complete(cs, &mcp.CompleteReference{Type: "ref/prompt", Name: s + "_greet"}, "name")
		},
		"completion of a template": func(cs *mcp.ClientSession, s string) (any, error) {
			return complete(cs, &mcp.CompleteReference{Type: "ref/resource", URI: s + "+file:///notes/{name}"}, "name")
		},
		"resources/subscribe": func(cs *mcp.ClientSession, s string) (any, error) {
			return nil, cs.Subscribe(ctx, s+"+file:///readme.txt")
		},
	}
	render := func(res any, err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		b, _ := json.Marshal(res)
		return string(b)
	}
	bob := connect(bobKey)
	deadline := time.Now().Add(waitFor)
	for {
		_, err := bob.CallTool(ctx, "beta_echo", map[string]string{"message": "x"})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("beta never served bob: %v\n%s", err, p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := render(asks["completion of a template"](bob, "beta")); !strings.Contains(got, "fixture-x") {
		t.Fatalf("bob's completion from beta: %s", got)
	}
	for who, k := range map[string]string{"alice (acme: alpha only)": aliceKey, "carol (no tenant)": carolKey} {
		cs := connect(k)
		for name, ask := range asks {
			hidden, absent := render(ask(cs, "beta")), render(ask(cs, "zeta"))
			if hidden != strings.ReplaceAll(absent, "zeta", "beta") {
				t.Errorf("%s, %s of beta's: %s\nbut of a server that does not exist: %s", who, name, hidden, absent)
			}
		}
	}
}
