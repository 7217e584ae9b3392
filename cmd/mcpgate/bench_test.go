package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Round trips through the real binary over real pipes: what a client of
// `mcpgate serve --stdio` pays per call, pipes and process switches
// included.

func BenchmarkStdioPing(b *testing.B) {
	p := start(b, serveArgs(filepath.Join(b.TempDir(), "tasks.db"))...)
	p.initialize()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
		p.recv()
	}
	b.StopTimer()
	p.wait()
}

func BenchmarkStdioToolsCall(b *testing.B) {
	p := start(b, serveArgs(filepath.Join(b.TempDir(), "tasks.db"))...)
	p.initialize()
	resp := p.roundTrip(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"create_task","arguments":{"title":"benchmark"}}}`)
	var m struct {
		Result struct {
			StructuredContent struct{ ID string } `json:"structuredContent"`
		} `json:"result"`
	}
	json.Unmarshal([]byte(resp), &m)
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_task","arguments":{"id":"` + m.Result.StructuredContent.ID + `"}}}`
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p.send(fmt.Sprintf(call, i))
		if r := p.recv(); strings.Contains(r, `"isError":true`) {
			b.Fatal(r)
		}
	}
	b.StopTimer()
	p.wait()
}
