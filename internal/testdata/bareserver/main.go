// Command bareserver is a tool server written the way hand-written
// servers often are (a JSON-lines loop from a Python template): it
// answers tools/list and tools/call, returns each tool's value itself
// instead of a CallToolResult, and answers anything else, initialize
// included, with -32601. The tests of bare tool servers start it as a
// real subprocess. Each request's method goes to stderr, so that a test
// can tell what the client sent.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

var tools = []map[string]any{
	{"name": "add", "description": "Add two numbers", "inputSchema": map[string]any{
		"type": "object", "properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}},
		"required": []string{"a", "b"},
	}},
	{"name": "greet", "description": "Greet someone", "inputSchema": map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}},
	}},
	// No inputSchema, as some templates leave it out.
	{"name": "note", "description": "The latest note"},
	{"name": "lookup", "description": "Look a record up (its database is always locked)", "inputSchema": map[string]any{"type": "object"}},
	{"name": "hang", "description": "Never answers", "inputSchema": map[string]any{"type": "object"}},
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func call(name string, args map[string]any) (any, *rpcError) {
	switch name {
	case "add":
		a, _ := args["a"].(float64)
		b, _ := args["b"].(float64)
		return map[string]any{"sum": a + b}, nil
	case "greet":
		return fmt.Sprintf("Hello, %v!", args["name"]), nil
	case "note":
		// A value of the tool's own with a member named content.
		return map[string]any{"title": "groceries", "content": "milk, eggs"}, nil
	case "lookup":
		return nil, &rpcError{-32000, "the database is locked"}
	}
	return nil, &rpcError{-32602, "Unknown tool: " + name}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "bad line:", err)
			continue
		}
		fmt.Fprintln(os.Stderr, "got", req.Method)
		resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch req.Method {
		case "tools/list":
			resp["result"] = map[string]any{"tools": tools}
		case "tools/call":
			// Stuck in the tool: no answer, ever.
			if req.Params.Name == "hang" {
				continue
			}
			res, err := call(req.Params.Name, req.Params.Arguments)
			if err != nil {
				resp["error"] = err
			} else {
				resp["result"] = res
			}
		default:
			// Notifications too get an answer, with a null id, as such
			// loops do.
			resp["error"] = &rpcError{-32601, "Method not found: " + req.Method}
		}
		out.Encode(resp)
	}
}
