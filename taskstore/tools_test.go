package taskstore

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// client speaks newline-delimited JSON-RPC to a server over OS pipes, as
// a desktop MCP client does over a child process's stdin and stdout.
type client struct {
	t      *testing.T
	w      *os.File
	lines  chan []byte
	nextID int
}

const waitFor = 10 * time.Second // a bound on a hang, not a timing assertion

func serve(t *testing.T, st *Store) *client {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "taskstore-test", Version: "1"},
		&mcp.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	Register(srv, st)
	RegisterPrompts(srv, st)
	RegisterResources(srv, st)
	serverIn, clientOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	clientIn, serverOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() {
		served <- srv.ServeConn(context.Background(), mcp.NewStdioConn(serverIn, serverOut, 0), nil)
		serverOut.Close()
	}()
	c := &client{t: t, w: clientOut, lines: make(chan []byte, 64)}
	go func() {
		defer close(c.lines)
		r := bufio.NewReader(clientIn)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			c.lines <- line
		}
	}()
	t.Cleanup(func() {
		clientOut.Close() // end of input ends the session
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("ServeConn: %v", err)
			}
		case <-time.After(waitFor):
			t.Error("the server did not stop at the end of its input")
		}
		clientIn.Close()
	})
	return c
}

func (c *client) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and returns its result, skipping notifications.
func (c *client) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.nextID++
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("%s: the server closed its output", method)
			}
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(line, &m); err != nil {
				c.t.Fatalf("%s: invalid JSON from the server: %q", method, line)
			}
			if m.ID == nil {
				continue // a notification
			}
			if *m.ID != c.nextID || m.Error != nil {
				c.t.Fatalf("%s: unexpected answer %s", method, line)
			}
			return m.Result
		case <-time.After(waitFor):
			c.t.Fatalf("%s: no answer", method)
		}
	}
}

type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (c *client) callTool(name string, args any) toolResult {
	c.t.Helper()
	var res toolResult
	raw := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) == 0 {
		c.t.Fatalf("%s: result %s (%v)", name, raw, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured result.
func (c *client) ok(name string, args any, out any) {
	c.t.Helper()
	res := c.callTool(name, args)
	if res.IsError {
		c.t.Fatalf("%s(%v): %s", name, args, res.Content[0].Text)
	}
	if res.Content[0].Text != string(res.StructuredContent) {
		c.t.Errorf("%s: the text block %q is not the structured result %s", name, res.Content[0].Text, res.StructuredContent)
	}
	if err := json.Unmarshal(res.StructuredContent, out); err != nil {
		c.t.Fatalf("%s: %s: %v", name, res.StructuredContent, err)
	}
}

// fails calls a tool that must return an isError result containing words.
func (c *client) fails(name string, args any, words ...string) {
	c.t.Helper()
	res := c.callTool(name, args)
	if !res.IsError {
		c.t.Errorf("%s(%v) succeeded: %s", name, args, res.StructuredContent)
		return
	}
	for _, w := range words {
		if !strings.Contains(res.Content[0].Text, w) {
			c.t.Errorf("%s(%v): error %q does not mention %q", name, args, res.Content[0].Text, w)
		}
	}
}

func (c *client) initialize() {
	c.t.Helper()
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"capabilities"`
	}
	json.Unmarshal(c.call("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "taskstore-test", "version": "1"},
	}), &init)
	if init.ProtocolVersion != "2025-11-25" || init.Capabilities.Tools == nil {
		c.t.Fatalf("initialize: %+v", init)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

type toolDef struct {
	Name         string         `json:"name"`
	Title        string         `json:"title"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"inputSchema"`
	OutputSchema map[string]any `json:"outputSchema"`
	Annotations  map[string]any `json:"annotations"`
}

func (d toolDef) prop(name string) map[string]any {
	props, _ := d.InputSchema["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	return p
}

func testToolsList(t *testing.T, b backend) {
	c := serve(t, openStore(t, b))
	c.initialize()
	var list struct{ Tools []toolDef }
	json.Unmarshal(c.call("tools/list", nil), &list)
	tools := map[string]toolDef{}
	for _, d := range list.Tools {
		tools[d.Name] = d
	}
	for _, tt := range []struct {
		name                              string
		readOnly, destructive, idempotent any // nil: absent
		required                          string
	}{
		{"create_task", nil, false, nil, "[title]"},
		{"get_task", true, nil, nil, "[id]"},
		{"list_tasks", true, nil, nil, "<nil>"},
		{"update_task", nil, false, true, "[id]"},
		{"complete_task", nil, false, true, "[id]"},
		{"delete_task", nil, true, true, "[id]"},
	} {
		d, ok := tools[tt.name]
		if !ok {
			t.Errorf("%s is not listed", tt.name)
			continue
		}
		a := d.Annotations
		if a["readOnlyHint"] != tt.readOnly || a["destructiveHint"] != tt.destructive || a["idempotentHint"] != tt.idempotent || a["openWorldHint"] != false {
			t.Errorf("%s: annotations %v", tt.name, a)
		}
		if d.Title == "" || len(d.Description) < 40 || d.OutputSchema["type"] != "object" {
			t.Errorf("%s: title %q, description %q, output schema %v", tt.name, d.Title, d.Description, d.OutputSchema)
		}
		if got := fmt.Sprint(d.InputSchema["required"]); got != tt.required {
			t.Errorf("%s: required %s, want %s", tt.name, got, tt.required)
		}
		if d.InputSchema["additionalProperties"] != false {
			t.Errorf("%s: unknown arguments are not rejected", tt.name)
		}
	}
	if len(list.Tools) != 6 {
		t.Errorf("%d tools listed, want 6", len(list.Tools))
	}

	statuses, priorities := "[pending in_progress done cancelled]", "[low medium high]"
	for _, tt := range []struct{ tool, prop, enum, dflt string }{
		{"create_task", "status", statuses, "pending"},
		{"create_task", "priority", priorities, "medium"},
		{"list_tasks", "status", statuses, "<nil>"},
		{"update_task", "status", statuses, "<nil>"},
		{"update_task", "priority", priorities, "<nil>"},
	} {
		p := tools[tt.tool].prop(tt.prop)
		if fmt.Sprint(p["enum"]) != tt.enum || fmt.Sprint(p["default"]) != tt.dflt {
			t.Errorf("%s.%s: enum %v default %v", tt.tool, tt.prop, p["enum"], p["default"])
		}
	}
	limit := tools["list_tasks"].prop("limit")
	if limit["minimum"] != 1.0 || limit["maximum"] != 100.0 || limit["default"] != 20.0 {
		t.Errorf("list_tasks.limit: %v", limit)
	}
	for _, p := range []string{"status", "query", "tag", "limit", "cursor"} {
		if tools["list_tasks"].prop(p)["description"] == nil {
			t.Errorf("list_tasks.%s has no description", p)
		}
	}
}

type wireTask struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Status      string   `json:"status"`
	Priority    string   `json:"priority"`
	Tags        []string `json:"tags"`
	CreatedAt   string   `json:"created_at"`
	UpdatedAt   string   `json:"updated_at"`
	CompletedAt string   `json:"completed_at"`
}

func testToolCalls(t *testing.T, b backend) {
	c := serve(t, openStore(t, b))
	c.initialize()

	var task wireTask
	c.ok("create_task", map[string]any{"title": "Ship v1", "tags": []string{"release"}, "priority": "high"}, &task)
	if !validID(task.ID) || task.Title != "Ship v1" || task.Status != "pending" || task.Priority != "high" ||
		!slices.Equal(task.Tags, []string{"release"}) || task.CompletedAt != "" || len(task.CreatedAt) != len("2006-01-02T15:04:05.000Z") {
		t.Errorf("create_task: %+v", task)
	}
	var plain wireTask
	c.ok("create_task", map[string]any{"title": "Plain"}, &plain)
	if plain.Status != "pending" || plain.Priority != "medium" || plain.Tags == nil {
		t.Errorf("create_task with defaults: %+v", plain)
	}

	type listPage struct {
		Tasks      []wireTask `json:"tasks"`
		NextCursor string     `json:"next_cursor"`
		Total      int        `json:"total"`
	}
	list := func(args map[string]any) (page listPage) {
		t.Helper()
		c.ok("list_tasks", args, &page)
		return page
	}
	page := list(map[string]any{})
	if page.Total != 2 || len(page.Tasks) != 2 || page.NextCursor != "" {
		t.Errorf("list_tasks: %+v", page)
	}
	page = list(map[string]any{"limit": 1})
	if len(page.Tasks) != 1 || page.NextCursor == "" || page.Total != 2 {
		t.Fatalf("list_tasks limit 1: %+v", page)
	}
	first := page.Tasks[0].ID
	page = list(map[string]any{"limit": 1, "cursor": page.NextCursor})
	if len(page.Tasks) != 1 || page.Tasks[0].ID == first || page.NextCursor != "" {
		t.Errorf("list_tasks second page: %+v", page)
	}
	page = list(map[string]any{"tag": "RELEASE", "query": "ship", "status": "pending"})
	if len(page.Tasks) != 1 || page.Tasks[0].ID != task.ID {
		t.Errorf("list_tasks filtered: %+v", page)
	}

	call := func(tool string, args map[string]any) (task wireTask) {
		t.Helper()
		c.ok(tool, args, &task)
		return task
	}
	if got := call("get_task", map[string]any{"id": task.ID}); got.ID != task.ID || got.UpdatedAt != task.UpdatedAt {
		t.Errorf("get_task: %+v", got)
	}
	got := call("update_task", map[string]any{"id": task.ID, "description": "notes", "tags": []string{}, "status": "in_progress"})
	if got.Description != "notes" || len(got.Tags) != 0 || got.Status != "in_progress" || got.Title != "Ship v1" || got.Priority != "high" {
		t.Errorf("update_task: %+v", got)
	}
	got = call("complete_task", map[string]any{"id": task.ID})
	if got.Status != "done" || got.CompletedAt == "" {
		t.Errorf("complete_task: %+v", got)
	}
	time.Sleep(2 * time.Millisecond)
	if again := call("complete_task", map[string]any{"id": task.ID}); again.CompletedAt != got.CompletedAt || again.UpdatedAt != got.UpdatedAt {
		t.Errorf("complete_task again changed the task from %+v to %+v", got, again)
	}
	var deleted struct {
		Deleted bool   `json:"deleted"`
		ID      string `json:"id"`
	}
	c.ok("delete_task", map[string]any{"id": task.ID}, &deleted)
	if !deleted.Deleted || deleted.ID != task.ID {
		t.Errorf("delete_task: %+v", deleted)
	}

	// Schema validation happens before the handler runs.
	c.fails("create_task", map[string]any{"priority": "urgent"}, "title", "priority")
	c.fails("create_task", map[string]any{"title": "t", "status": "finished"}, "status")
	c.fails("create_task", map[string]any{"title": ""}, "title")
	c.fails("create_task", map[string]any{"title": "t", "colour": "red"}, "colour")
	c.fails("list_tasks", map[string]any{"limit": 500}, "limit")
	c.fails("get_task", map[string]any{}, "id")
	// Then the store's own checks.
	c.fails("create_task", map[string]any{"title": "   "}, "title must be 1 to 500 characters")
	c.fails("create_task", map[string]any{"title": "t", "tags": []string{"ok", "  "}}, "tags[1]")
	c.fails("update_task", map[string]any{"id": plain.ID}, "nothing to update")
	c.fails("list_tasks", map[string]any{"cursor": "bogus"}, "cursor", "next_cursor")
	for _, tool := range []string{"get_task", "update_task", "complete_task", "delete_task"} {
		args := map[string]any{"id": task.ID}
		if tool == "update_task" {
			args["title"] = "x"
		}
		c.fails(tool, args, `no task with id "`+task.ID+`"; call list_tasks to find task ids`)
	}
}
