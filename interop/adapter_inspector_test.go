package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// inspectorSession is the MCP Inspector's CLI mode (`inspector --cli`,
// v2.12.0, on the @modelcontextprotocol/client 2.x SDK). Each call is one
// run of the CLI, so one session of its own: for stdio a new server
// process each time (the task store keeps its state in the --db file).
// The CLI neither asks for progress nor cancels, and has no ping; its
// `initialize` method stands in for ping and tells the revision.
type inspectorSession struct {
	t          *testing.T
	url        string   // the server's URL, or
	command    []string // the server's command line (stdio)
	catalog    string
	negotiated string
	server     string
}

func inspectorBin() string {
	return npmBin("@modelcontextprotocol/inspector", "clients/launcher/build/index.js")
}

func connectInspector(ctx context.Context, t *testing.T, tgt target) (*inspectorSession, error) {
	s := &inspectorSession{t: t, catalog: filepath.Join(t.TempDir(), "mcp.json")}
	switch tgt.transport {
	case "stdio":
		s.command = append([]string{tgt.command}, tgt.args...)
	default:
		// The CLI picks the transport from the path: /mcp or /sse.
		s.url = tgt.url
	}
	out, err := s.run(ctx, "initialize")
	if err != nil {
		return nil, err
	}
	var res struct {
		ProtocolVersion string
		ServerInfo      struct{ Name string }
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("initialize: %v: %s", err, out)
	}
	s.negotiated, s.server = res.ProtocolVersion, res.ServerInfo.Name
	return s, nil
}

// run runs the CLI once; exit status 5 (a tool's isError result) still
// has the result on stdout.
func (s *inspectorSession) run(ctx context.Context, method string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	// A URL goes first (an option taking a list, such as --prompt-args,
	// would swallow it at the end); a command goes last, after --.
	argv := []string{inspectorBin(), "--cli"}
	if s.url != "" {
		argv = append(argv, s.url)
	}
	argv = append(argv, "--method", method)
	argv = append(argv, args...)
	if s.command != nil {
		argv = append(append(argv, "--"), s.command...)
	}
	cmd := exec.CommandContext(ctx, env.node, argv...)
	// It starts node by name: ours, the pinned one, must come first.
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(env.node)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"MCP_CATALOG_PATH="+s.catalog)
	cmd.SysProcAttr = sysProcAttr()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 5 && method == "tools/call") {
		return nil, fmt.Errorf("inspector --cli --method %s: %v; stderr: %s; stdout: %.500s", method, err, strings.TrimSpace(stderr.String()), stdout.String())
	}
	return stdout.Bytes(), nil
}

func (s *inspectorSession) Negotiated() string { return s.negotiated }
func (s *inspectorSession) ServerName() string { return s.server }

func (s *inspectorSession) ListTools(ctx context.Context) ([]string, error) {
	out, err := s.run(ctx, "tools/list")
	if err != nil {
		return nil, err
	}
	var res struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("tools/list: %v: %.300s", err, out)
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	return names, nil
}

func (s *inspectorSession) CallTool(ctx context.Context, name string, args map[string]any) (*toolResult, error) {
	argv := []string{"--tool-name", name}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		// Strings go as they are; other values as JSON, which the CLI
		// parses.
		v, ok := args[k].(string)
		if !ok {
			b, _ := json.Marshal(args[k])
			v = string(b)
		}
		argv = append(argv, "--tool-arg", k+"="+v)
	}
	out, err := s.run(ctx, "tools/call", argv...)
	if err != nil {
		return nil, err
	}
	var res struct {
		Content []tsContent
		IsError bool
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("tools/call: %v: %.300s", err, out)
	}
	return &toolResult{Texts: tsTexts(res.Content), IsError: res.IsError}, nil
}

func (s *inspectorSession) CallToolProgress(context.Context, string, map[string]any) (*toolResult, []progressEvent, error) {
	return nil, nil, errors.New("the Inspector's CLI does not ask for progress")
}

func (s *inspectorSession) CancelAtFirstProgress(context.Context, string, map[string]any) error {
	return errors.New("the Inspector's CLI does not cancel")
}

func (s *inspectorSession) ReadResource(ctx context.Context, uri string) ([]string, error) {
	out, err := s.run(ctx, "resources/read", "--uri", uri)
	if err != nil {
		return nil, err
	}
	var res struct{ Contents []struct{ Text string } }
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("resources/read: %v: %.300s", err, out)
	}
	var texts []string
	for _, c := range res.Contents {
		texts = append(texts, c.Text)
	}
	return texts, nil
}

func (s *inspectorSession) GetPrompt(ctx context.Context, name string, args map[string]string) ([]string, error) {
	argv := []string{"--prompt-name", name}
	if len(args) > 0 {
		argv = append(argv, "--prompt-args")
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			argv = append(argv, k+"="+args[k])
		}
	}
	out, err := s.run(ctx, "prompts/get", argv...)
	if err != nil {
		return nil, err
	}
	var res struct{ Messages []struct{ Content tsContent } }
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("prompts/get: %v: %.300s", err, out)
	}
	var texts []string
	for _, m := range res.Messages {
		if m.Content.Type == "text" {
			texts = append(texts, m.Content.Text)
		}
	}
	return texts, nil
}

func (s *inspectorSession) Ping(ctx context.Context) error {
	_, err := s.run(ctx, "initialize")
	return err
}

func (s *inspectorSession) Close() error { return nil }
