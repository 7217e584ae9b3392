package interop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// features says which parts of a session a pair exercises; a client or
// server that lacks one (mcp-go sends no cancellation over HTTP) leaves it
// out, and the matrix's checks column shows what ran.
type features struct {
	progress, cancel, resources, prompts bool
}

var allFeatures = features{progress: true, cancel: true, resources: true, prompts: true}

// uniqueKey names one interop_slow call.
func uniqueKey(t *testing.T) string {
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

// checkNegotiated compares what the client says was negotiated with what
// was offered, and records it.
func checkNegotiated(t *testing.T, r *row, s session) {
	t.Helper()
	got := s.Negotiated()
	if got == "" {
		return
	}
	if pinned(r) && got != r.Offered {
		t.Errorf("offered %s but the session runs at %s: the server supports %s and must accept it", r.Offered, got, r.Offered)
	}
	if r.Negotiated != "" && r.Negotiated != got {
		t.Errorf("this session runs at %s but an earlier one of the same pair at %s", got, r.Negotiated)
	}
	r.setNegotiated(got)
}

// pinned reports whether the row's client was made to offer one revision,
// rather than left to choose ("default", or the TS v2 client's "auto").
func pinned(r *row) bool {
	return r.Offered != "default" && r.Offered != "auto"
}

// checkPing checks the server answers the session's liveness check: ping,
// or, at 2026-07-28, which has no ping, what the client sends instead
// (server/discover), if anything.
func checkPing(ctx context.Context, t *testing.T, r *row, s session) {
	t.Helper()
	method := "ping"
	if p, ok := s.(interface{ PingMethod() string }); ok {
		method = p.PingMethod()
	}
	if method == "" {
		return // the client sends nothing: no check
	}
	if err := s.Ping(ctx); err != nil {
		fatalf(t, r, "%s: %v", method, err)
	}
	r.check(method)
}

// tasksScenario is a short real session with `mcpgate serve`: list the
// tools, create a task, read it back, find it in the list.
func tasksScenario(ctx context.Context, t *testing.T, r *row, s session) {
	t.Helper()
	checkNegotiated(t, r, s)
	if name := s.ServerName(); name != "mcpgate" {
		t.Errorf("serverInfo.name = %q, want mcpgate", name)
	}
	names, err := s.ListTools(ctx)
	if err != nil {
		fatalf(t, r, "tools/list: %v", err)
	}
	for _, want := range []string{"create_task", "get_task", "list_tasks", "update_task", "complete_task", "delete_task"} {
		if !slices.Contains(names, want) {
			fatalf(t, r, "tools/list lacks %s: %v", want, names)
		}
	}
	r.check("tools/list")

	title := "interop " + t.Name()
	res, err := s.CallTool(ctx, "create_task", map[string]any{"title": title, "priority": "high", "tags": []string{"interop"}})
	if err != nil {
		fatalf(t, r, "create_task: %v", err)
	}
	if res.IsError {
		fatalf(t, r, "create_task failed: %s", res.text())
	}
	var task struct{ ID, Title, Priority, Status string }
	if err := res.decode(&task); err != nil {
		fatalf(t, r, "create_task: %v", err)
	}
	if task.ID == "" || task.Title != title || task.Priority != "high" || task.Status != "pending" {
		fatalf(t, r, "create_task returned %+v", task)
	}
	res, err = s.CallTool(ctx, "get_task", map[string]any{"id": task.ID})
	if err != nil || res.IsError {
		fatalf(t, r, "get_task: %v %s", err, res.text())
	}
	var got struct{ ID, Title string }
	if err := res.decode(&got); err != nil || got.ID != task.ID || got.Title != title {
		fatalf(t, r, "get_task returned %+v (%v), want the task just created", got, err)
	}
	res, err = s.CallTool(ctx, "list_tasks", map[string]any{"tag": "interop"})
	if err != nil || res.IsError {
		fatalf(t, r, "list_tasks: %v %s", err, res.text())
	}
	var list struct{ Tasks []struct{ ID string } }
	if err := res.decode(&list); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.Tasks, func(x struct{ ID string }) bool { return x.ID == task.ID }) {
		fatalf(t, r, "list_tasks does not list %s: %s", task.ID, res.text())
	}
	// A tool error is a result, not a protocol error, in every revision.
	res, err = s.CallTool(ctx, "get_task", map[string]any{"id": "task_zzzzzzzzzzzzzzzz"})
	if err != nil {
		fatalf(t, r, "get_task of a missing task: %v (want an isError result)", err)
	}
	if !res.IsError {
		fatalf(t, r, "get_task of a missing task: want isError, got %s", res.text())
	}
	r.check("tools/call")
}

// fixturesScenario runs a session with our fixtures server (the
// conformance fixtures on our engine): the revision as the server saw it,
// content, progress, a resource, a prompt and a cancellation that the
// server's handler must see.
func fixturesScenario(ctx context.Context, t *testing.T, r *row, s session, f features) {
	t.Helper()
	checkNegotiated(t, r, s)
	res, err := s.CallTool(ctx, "interop_session", nil)
	if err != nil || res.IsError {
		fatalf(t, r, "interop_session: %v %s", err, res.text())
	}
	var info struct{ ProtocolVersion, Offered, ClientName string }
	if err := res.decode(&info); err != nil {
		t.Fatal(err)
	}
	if c := s.Negotiated(); c != "" && c != info.ProtocolVersion {
		t.Errorf("the client says the session runs at %s, the server at %s", c, info.ProtocolVersion)
	}
	if pinned(r) && info.Offered != r.Offered {
		t.Errorf("the server saw %s offered, want %s", info.Offered, r.Offered)
	}
	if r.Negotiated == "" {
		r.setNegotiated(info.ProtocolVersion)
	}

	names, err := s.ListTools(ctx)
	if err != nil {
		fatalf(t, r, "tools/list: %v", err)
	}
	if !slices.Contains(names, "test_simple_text") || !slices.Contains(names, "interop_slow") {
		fatalf(t, r, "tools/list: %v", names)
	}
	r.check("tools/list")
	res, err = s.CallTool(ctx, "test_simple_text", nil)
	if err != nil || res.IsError || res.text() != "This is a simple text response for testing." {
		fatalf(t, r, "test_simple_text: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "test_error_handling", nil)
	if err != nil || !res.IsError {
		fatalf(t, r, "test_error_handling: want an isError result, got %v %+v", err, res)
	}
	r.check("tools/call")

	if f.progress {
		res, prog, err := s.CallToolProgress(ctx, "test_tool_with_progress", nil)
		if err != nil || res.IsError {
			fatalf(t, r, "test_tool_with_progress: %v %+v", err, res)
		}
		checkProgress(t, r, prog, []float64{0, 50, 100}, 100)
		// The message field exists from 2025-03-26 on.
		if v := info.ProtocolVersion; v != "2024-11-05" && len(prog) > 0 && prog[0].Message == "" {
			t.Errorf("progress at %s lacks its message: %+v", v, prog)
		}
		r.check("progress")
	}
	if f.resources {
		texts, err := s.ReadResource(ctx, "test://static-text")
		if err != nil || len(texts) != 1 || texts[0] != "This is the content of the static text resource." {
			fatalf(t, r, "resources/read test://static-text: %v %q", err, texts)
		}
		texts, err = s.ReadResource(ctx, "test://template/42/data")
		if err != nil || len(texts) != 1 || !strings.Contains(texts[0], `"id":"42"`) {
			fatalf(t, r, "resources/read of a template: %v %q", err, texts)
		}
		r.check("resources/read")
	}
	if f.prompts {
		texts, err := s.GetPrompt(ctx, "test_prompt_with_arguments", map[string]string{"arg1": "left", "arg2": "right"})
		if err != nil || len(texts) != 1 || texts[0] != "Prompt with arguments: arg1='left', arg2='right'" {
			fatalf(t, r, "prompts/get: %v %q", err, texts)
		}
		r.check("prompts/get")
	}
	if f.cancel {
		checkCancel(ctx, t, r, s, "interop_slow", "interop_cancel_state")
	}
	checkPing(ctx, t, r, s)
}

// checkCancel cancels a slow call at its first progress notification and
// asks the server how the call ended: the handler must have been
// cancelled, and the session must go on.
func checkCancel(ctx context.Context, t *testing.T, r *row, s session, slow, state string) {
	t.Helper()
	key := uniqueKey(t)
	cctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	if err := s.CancelAtFirstProgress(cctx, slow, map[string]any{"key": key}); err != nil {
		fatalf(t, r, "cancelling %s: %v", slow, err)
	}
	res, err := s.CallTool(ctx, state, map[string]any{"key": key, "waitMs": 3000})
	if err != nil || res.IsError {
		fatalf(t, r, "%s after a cancellation: %v %s", state, err, res.text())
	}
	var st struct{ State, Cause string }
	if err := res.decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.State != "cancelled" {
		fatalf(t, r, "the server's handler was not cancelled: state %q (%s)", st.State, st.Cause)
	}
	t.Logf("cancelled: %s", st.Cause)
	r.check("cancel")
}

func checkProgress(t *testing.T, r *row, got []progressEvent, want []float64, total float64) {
	t.Helper()
	var vals []float64
	for _, p := range got {
		vals = append(vals, p.Progress)
		if p.Total != total {
			t.Errorf("progress total %v, want %v", p.Total, total)
		}
	}
	if !slices.Equal(vals, want) {
		fatalf(t, r, "progress %v, want %v", vals, want)
	}
}
