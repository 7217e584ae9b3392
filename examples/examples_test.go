// Package examples_test runs the example programs for real: each is built,
// started as a subprocess and spoken to over real pipes or real HTTP on
// loopback, so that an example that stops working fails make test.
package examples_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testbin"
	"github.com/mcpgate/mcpgate/mcp"
)

const waitFor = 60 * time.Second // a bound on a hang (a cold go build may run inside it)

const (
	typedServerPkg     = "github.com/mcpgate/mcpgate/examples/typed-server"
	clientPkg          = "github.com/mcpgate/mcpgate/examples/client"
	embeddedGatewayPkg = "github.com/mcpgate/mcpgate/examples/embedded-gateway"
)

// syncBuffer is a bytes.Buffer safe for one writer and readers at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runClient runs the client example with args and returns its standard
// output and error and its exit status.
func runClient(t *testing.T, client string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	cmd := exec.CommandContext(ctx, client, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		code = ee.ExitCode()
	default:
		t.Fatalf("client %q: %v\nstdout:\n%s\nstderr:\n%s", args, err, out.String(), errOut.String())
	}
	return out.String(), errOut.String(), code
}

func TestClientExampleCallsTheTypedServerExample(t *testing.T) {
	server := testbin.Build(t, typedServerPkg)
	client := testbin.Build(t, clientPkg)
	const toFahrenheit = `{"value":100,"from":"celsius","to":"fahrenheit"}`
	tests := []struct {
		name      string
		flags     []string
		wantCode  int
		wantOut   []string // each must be in the standard output
		wantError string   // must be in the standard error
	}{
		{
			name:  "the client chooses the per-request era of a server that answers discover",
			flags: []string{"-tool", "convert_temperature", "-args", toFahrenheit},
			wantOut: []string{"connected to typed-server 1.0.0 (protocol 2026-07-28)",
				"convert_temperature", "count_words", `structured: {"unit":"fahrenheit","value":212}`},
		},
		{
			name:    "a pinned session-era revision is negotiated through initialize",
			flags:   []string{"-protocol", "2025-11-25", "-tool", "convert_temperature", "-args", toFahrenheit},
			wantOut: []string{"(protocol 2025-11-25)", `"value":212`},
		},
		{
			name:    "the oldest revision gets the result as text",
			flags:   []string{"-protocol", "2024-11-05", "-tool", "count_words", "-args", `{"text":"one two three"}`},
			wantOut: []string{"(protocol 2024-11-05)", `text: {"words":3,"characters":13}`},
		},
		{
			name:    "omitted arguments take the defaults of the struct tags",
			flags:   []string{"-tool", "convert_temperature", "-args", `{"value":212,"from":"fahrenheit"}`},
			wantOut: []string{`structured: {"unit":"celsius","value":100}`},
		},
		{
			name:      "arguments the schema refuses never reach the handler",
			flags:     []string{"-tool", "convert_temperature", "-args", `{"from":"rankine"}`},
			wantCode:  1,
			wantOut:   []string{"/from: value must be one of 'celsius', 'fahrenheit', 'kelvin'", "missing property 'value'"},
			wantError: "the tool reported an error",
		},
		{
			name:      "a handler's error result reaches the client",
			flags:     []string{"-tool", "convert_temperature", "-args", `{"value":-1,"from":"kelvin"}`},
			wantCode:  1,
			wantOut:   []string{"text: -1 kelvin is below absolute zero"},
			wantError: "the tool reported an error",
		},
		{
			name:      "an unknown tool is a protocol error",
			flags:     []string{"-tool", "no_such_tool"},
			wantCode:  2,
			wantError: `unknown tool "no_such_tool"`,
		},
		{
			name:      "arguments that are not a JSON object are refused before connecting",
			flags:     []string{"-tool", "count_words", "-args", `["a"]`},
			wantCode:  2,
			wantError: "give a JSON object",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runClient(t, client, append(tt.flags, "--", server)...)
			if code != tt.wantCode {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(stdout, w) {
					t.Errorf("the output lacks %q:\n%s", w, stdout)
				}
			}
			if !strings.Contains(stderr, tt.wantError) {
				t.Errorf("the error output lacks %q:\n%s", tt.wantError, stderr)
			}
		})
	}
}

// The typed server's resource, prompt and schemas, through the library's
// client: what the client example does not show.
func TestTypedServerExampleOffersSchemasResourceAndPrompt(t *testing.T) {
	server := testbin.Build(t, typedServerPkg)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "examples-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(server)})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "convert_temperature" })
	if i < 0 {
		t.Fatalf("no convert_temperature in %d tools", len(tools.Tools))
	}
	b, err := json.Marshal(tools.Tools[i].InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Enum    []string `json:"enum"`
			Default any      `json:"default"`
			Maximum *float64 `json:"maximum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	slices.Sort(schema.Required)
	if !slices.Equal(schema.Required, []string{"from", "value"}) {
		t.Errorf("required %q, want from and value (the fields without omitempty): %s", schema.Required, b)
	}
	if to := schema.Properties["to"]; len(to.Enum) != 3 || to.Default != "celsius" {
		t.Errorf(`"to" has enum %q and default %v, want the three units and celsius: %s`, to.Enum, to.Default, b)
	}
	if d := schema.Properties["digits"]; d.Maximum == nil || *d.Maximum != 6 {
		t.Errorf(`"digits" has no maximum of 6: %s`, b)
	}

	rr, err := cs.ReadResource(ctx, "units://temperature")
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "K = C + 273.15") {
		t.Errorf("units://temperature reads %+v", rr.Contents)
	}

	pr, err := cs.GetPrompt(ctx, "explain_conversion", map[string]string{"value": "100", "from": "celsius", "to": "kelvin"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Messages) != 1 {
		t.Fatalf("explain_conversion has %d messages, want 1", len(pr.Messages))
	}
	if tc, ok := pr.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "Convert 100 celsius to kelvin") {
		t.Errorf("explain_conversion says %#v", pr.Messages[0].Content)
	}
}

func TestEmbeddedGatewayExampleServesTheTypedServerOverHTTP(t *testing.T) {
	server := testbin.Build(t, typedServerPkg)
	client := testbin.Build(t, clientPkg)
	gw := testbin.Build(t, embeddedGatewayPkg)

	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	cmd := exec.CommandContext(ctx, gw, "-addr", "127.0.0.1:0", "--", server)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var logs syncBuffer // written by the command's copier while the test reads it
	cmd.Stderr = &logs
	// A pipe of our own rather than StdoutPipe, which Wait would close
	// under the reader.
	stdout, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	exited := false
	defer func() {
		if !exited {
			cancel()
			cmd.Wait()
		}
	}()

	// The gateway prints its endpoint once it listens.
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				urls <- u
			}
		}
		close(urls)
	}()
	var url string
	select {
	case u, ok := <-urls:
		if !ok {
			t.Fatalf("the gateway ended without listening:\n%s", logs.String())
		}
		url = u
	case <-ctx.Done():
		t.Fatalf("the gateway did not say where it listens:\n%s", logs.String())
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("the gateway listens on %s, not on loopback", url)
	}

	tests := []struct {
		name    string
		flags   []string
		wantOut []string
	}{
		{
			name:    "a per-request client calls the upstream's tool under the server's prefix",
			flags:   []string{"-tool", "typed_convert_temperature", "-args", `{"value":100,"from":"celsius","to":"kelvin"}`},
			wantOut: []string{"(protocol 2026-07-28)", "typed_count_words", `structured: {"unit":"kelvin","value":373.15}`},
		},
		{
			name:    "a session-era client gets the same tools through the same endpoint",
			flags:   []string{"-protocol", "2025-11-25", "-tool", "typed_count_words", "-args", `{"text":"a b c"}`},
			wantOut: []string{"(protocol 2025-11-25)", "typed_convert_temperature", `structured: {"characters":5,"words":3}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runClient(t, client, append(tt.flags, url)...)
			if code != 0 {
				t.Errorf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("the output lacks %q:\n%s", w, out)
				}
			}
		})
	}

	// SIGTERM stops it cleanly, with its upstream.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	exited = true
	if ctx.Err() != nil {
		t.Fatalf("the gateway did not stop on SIGTERM:\n%s", logs.String())
	}
	if err != nil {
		t.Errorf("the gateway ended with %v:\n%s", err, logs.String())
	}
}
