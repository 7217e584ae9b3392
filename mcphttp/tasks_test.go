package mcphttp

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// Tasks over HTTP, in both eras on one endpoint: a 2025-11-25 session and
// 2026-07-28 requests each create a task and fetch it, each in its own
// shape; another principal cannot see either; the extension's tasks/get
// needs Mcp-Name = taskId.
func TestTasksOverHTTP(t *testing.T) {
	s := testServer()
	mcp.AddTool(s, &mcp.Tool{Name: "job", Description: "d", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return mcp.TextResult("job done"), nil, nil
		})
	_, srv := startHTTP(t, s, &Options{Principal: func(r *http.Request) string { return r.Header.Get("X-User") }})
	idOf := regexp.MustCompile(`"taskId":"([0-9a-f]+)"`)

	legacy := newClient(t, srv)
	legacy.headers["X-User"] = "alice"
	legacy.initialize("2025-11-25")
	_, body := legacy.call(1, "tools/call", `{"name":"job","task":{}}`)
	m := idOf.FindStringSubmatch(body)
	if m == nil || !strings.Contains(body, `"task":{`) {
		t.Fatalf("legacy create: %s", body)
	}
	if _, body := legacy.call(2, "tasks/result", `{"taskId":"`+m[1]+`"}`); !strings.Contains(body, "job done") || !strings.Contains(body, "related-task") {
		t.Errorf("legacy tasks/result: %s", body)
	}

	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	perRequest := newClient(t, srv)
	post := func(user, method, name, params string) (int, string) {
		resp := perRequest.post(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`,
			"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", method, "Mcp-Name", name, "X-User", user)
		return resp.StatusCode, readAll(t, resp)
	}
	code, body := post("alice", "tools/call", "job", `{"name":"job",`+meta+`}`)
	mm := idOf.FindStringSubmatch(body)
	if code != 200 || mm == nil || !strings.Contains(body, `"resultType":"task"`) {
		t.Fatalf("per-request create: %d %s", code, body)
	}
	get := `{"taskId":"` + mm[1] + `",` + meta + `}`
	for {
		code, body = post("alice", "tasks/get", mm[1], get)
		var r struct {
			Result struct{ Status string } `json:"result"`
		}
		json.Unmarshal([]byte(body), &r)
		if code != 200 || r.Result.Status == "completed" {
			break
		}
	}
	if code != 200 || !strings.Contains(body, "job done") {
		t.Errorf("per-request tasks/get: %d %s", code, body)
	}
	if code, body := post("alice", "tasks/get", "", get); code != 400 || errorCode(t, body) != mcp.CodeHeaderMismatch {
		t.Errorf("tasks/get without Mcp-Name: %d %s", code, body)
	}
	if code, body := post("mallory", "tasks/get", mm[1], get); errorCode(t, body) != -32602 {
		t.Errorf("another principal's per-request tasks/get: %d %s", code, body)
	}
	// The legacy task is not a per-request one, nor another principal's.
	if _, body := post("alice", "tasks/get", m[1], `{"taskId":"`+m[1]+`",`+meta+`}`); errorCode(t, body) != -32602 {
		t.Errorf("a legacy task through the extension: %s", body)
	}
}
