package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// runCheckConfig runs the built binary, as a person would.
func runCheckConfig(t *testing.T, file string, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCheckConfigArgs(t, env, file)
}

// runCheckConfigArgs runs check-config with args (none: the default
// file) and env over this process's environment.
func runCheckConfigArgs(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"check-config"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// fakePrograms makes a directory of executable scripts named names, to
// be the PATH the binary looks commands up in.
func fakePrograms(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCheckConfigClaudeDesktop(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake programs are shell scripts")
	}
	file := filepath.Join("..", "..", "gateway", "config", "testdata", "claude_desktop_config.json")
	bin := fakePrograms(t, "npx", "docker", "node") // and no uvx
	stdout, stderr, code := runCheckConfig(t, file, "PATH="+bin)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		file + ": OK, 4 servers, 4 warnings\n",
		"  github      stdio  lazy  docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server; env: GITHUB_PERSONAL_ACCESS_TOKEN\n",
		`  filesystem  stdio  lazy  npx -y @modelcontextprotocol/server-filesystem 'C:\Users\ada\Desktop' /Users/ada/Downloads`,
		"builtins: none\n",
		"tool listing: full (full definitions)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	for _, want := range []string{
		file + `:2:3: warning: key "globalShortcut" ignored (hint: `,
		file + `:21:18: warning: command "uvx" not found in PATH (searched ` + bin + `) (hint: install uv, which has uvx (https://docs.astral.sh/uv/), or write the program's absolute path)` + "\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stdout+stderr, "ghp_example") {
		t.Errorf("a secret was printed:\n%s%s", stdout, stderr)
	}
}

func TestCheckConfigErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	src := `mcpServers:
  github:
    url: https://api.example.com/mcp
    headers:
      Authorization: Bearer ${GH_TOKEN}
    start: soon
  Local_Files:
    comand: npx
  remote:
    url: ftp://files.example.com
`
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCheckConfig(t, file, "GH_TOKEN=ghs-s3cret")
	want := file + `:6:12: start "soon" is not lazy or eager (hint: use "lazy" (start on first use) or "eager" (start at load))
` + file + `:7:3: server name "Local_Files" is not 1 to 32 of a-z, 0-9 and '-' starting with a letter (hint: rename it to "local-files")
` + file + `:8:5: unknown key "comand" (hint: did you mean "command"?)
` + file + `:10:10: url must start with http:// or https:// (hint: write an absolute URL such as https://example.com/mcp)
mcpgate: ` + file + `: 4 errors
`
	if code != 1 || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant:\n%s", code, stdout, stderr, want)
	}

	// Fixed, it passes, and the token stays hidden.
	src = strings.NewReplacer("start: soon", "start: lazy", "Local_Files", "local-files", "comand", "command", "ftp:", "https:").Replace(src)
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runCheckConfig(t, file, "GH_TOKEN=ghs-s3cret", "PATH="+fakePrograms(t, "npx"))
	if code != 0 || !strings.Contains(stdout, "  github       http   lazy   https://api.example.com/mcp; headers: Authorization\n") ||
		!strings.Contains(stdout, "  remote       http   eager  https://files.example.com\n") || stderr != "" {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "s3cret") {
		t.Errorf("the token was printed:\n%s", stdout)
	}
}

func TestCheckConfigMissingFile(t *testing.T) {
	_, stderr, code := runCheckConfig(t, filepath.Join(t.TempDir(), "nope.json"))
	if code != 1 || !strings.Contains(stderr, "no such file") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestCheckConfigCatchesWhatTheGatewayTripsOn: files that mcpgate would
// load, or nearly, but that fail later (in Claude Desktop, at start, in
// serve) are told so, with the place and the fix; and the summary shows
// how tools will be listed.
func TestCheckConfigCatchesWhatTheGatewayTripsOn(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake programs are shell scripts")
	}
	bin := fakePrograms(t, "npx", "uvx")
	for _, tc := range []struct {
		name, file, src string
		code            int
		stderr, stdout  []string // lines (FILE: stands for the file's path), or parts of lines
	}{
		{"trailing comma", "claude_desktop_config.json", "{\n  \"mcpServers\": {\n    \"m\": {\"command\": \"npx\", \"args\": [\"x\",]}\n  }\n}\n", 0,
			[]string{"FILE:3:41: warning: not strict JSON: a trailing comma (hint: mcpgate reads it, but Claude Desktop and other clients that read the file as strict JSON refuse all of it: delete the comma)\n"},
			[]string{"FILE: OK, 1 server, 1 warning\n"}},
		{"command not in PATH", "c.json", `{"mcpServers": {"m": {"command": "npxx", "args": ["-y", "x"]}}}`, 0,
			[]string{`FILE:1:34: warning: command "npxx" not found in PATH (searched ` + bin + `) (hint: did you mean "npx" (in ` + bin + `)?)` + "\n"},
			[]string{"FILE: OK, 1 server, 1 warning\n"}},
		{"arguments for args", "c.json", `{"mcpServers": {"m": {"command": "npx", "arguments": ["x"]}}}`, 1,
			[]string{`FILE:1:41: unknown key "arguments" (hint: did you mean "args"?)` + "\n"}, nil},
		{"listen on a port alone", "c.yaml", "listen: \"9000\"\nmcpServers: {m: {command: npx}}\n", 1,
			[]string{`FILE:1:9: listen "9000" is not a host and port (hint: write host:port, such as "127.0.0.1:9000" (this machine only); another interface needs authentication (serve's --auth-keys, --auth-users or --oauth-issuer))` + "\n"}, nil},
		{"listen on every interface", "c.yaml", "listen: \":9000\"\nmcpServers: {m: {command: npx}}\n", 0, nil,
			[]string{"listen: :9000 (reachable from other machines: serve needs --auth-keys, --auth-users or --oauth-issuer, or --allow-anonymous behind a proxy that authenticates)\n"}},
		{"search listing", "c.yaml", `mcpServers:
  m: {command: npx, pins: block}
  p: {command: uvx}
toolSearch: {listing: search, servers: {p: minimal}, pinned: [m_read*]}
tenants: {t: {toolListing: full}, u: {}}
`, 0, nil,
			[]string{"  m  stdio  lazy  npx; pins block\n", "  p  stdio  lazy  uvx; listing minimal\n",
				"tool listing: search (pinned tools and the meta-tools search_tools, describe_tool and call_tool; 1 pinned pattern listed in full)\n",
				"tenants: t (listing full), u\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(file, []byte(tc.src), 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runCheckConfig(t, file, "PATH="+bin)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			for _, want := range tc.stderr {
				if want = strings.ReplaceAll(want, "FILE:", file+":"); !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			for _, want := range tc.stdout {
				if want = strings.ReplaceAll(want, "FILE:", file+":"); !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			if len(tc.stderr) == 0 && stderr != "" {
				t.Errorf("stderr:\n%s", stderr)
			}
		})
	}
}

// TestCheckConfigWithoutFile checks $MCPGATE_CONFIG, else Claude
// Desktop's config, saying which; with neither it says what it looked
// for and what it wants.
func TestCheckConfigWithoutFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Claude Desktop's config is looked for under $HOME/.config here")
	}
	bin := fakePrograms(t, "npx")
	good := `{"mcpServers": {"m": {"command": "npx"}}}`
	for _, tc := range []struct {
		name   string
		files  map[string]string // under a fresh HOME
		env    []string          // HOME/ is the fresh HOME
		code   int
		stderr []string // HOME/ is the fresh HOME
		stdout string
	}{
		{"Claude Desktop's", map[string]string{".config/Claude/claude_desktop_config.json": good}, nil, 0,
			[]string{"mcpgate: no FILE given: checking HOME/.config/Claude/claude_desktop_config.json, Claude Desktop's config\n"},
			"HOME/.config/Claude/claude_desktop_config.json: OK, 1 server\n"},
		{"Claude Desktop's under XDG_CONFIG_HOME", map[string]string{"xdg/Claude/claude_desktop_config.json": good}, []string{"XDG_CONFIG_HOME=HOME/xdg"}, 0,
			[]string{"checking HOME/xdg/Claude/claude_desktop_config.json, Claude Desktop's config\n"},
			"HOME/xdg/Claude/claude_desktop_config.json: OK, 1 server\n"},
		{"MCPGATE_CONFIG first", map[string]string{"gw.yaml": "mcpServers: {a: {command: npx}, b: {command: npx}}\n", ".config/Claude/claude_desktop_config.json": good},
			[]string{"MCPGATE_CONFIG=HOME/gw.yaml"}, 0,
			[]string{"mcpgate: no FILE given: checking HOME/gw.yaml, from $MCPGATE_CONFIG\n"},
			"HOME/gw.yaml: OK, 2 servers\n"},
		{"MCPGATE_CONFIG missing", map[string]string{".config/Claude/claude_desktop_config.json": good}, []string{"MCPGATE_CONFIG=HOME/gone.yaml"}, 1,
			[]string{"checking HOME/gone.yaml, from $MCPGATE_CONFIG\n", "no such file"}, ""},
		{"none", nil, nil, 1,
			[]string{"mcpgate: no FILE given, and no default configuration found. Looked for:\n" +
				"  $MCPGATE_CONFIG: not set\n" +
				"  HOME/.config/Claude/claude_desktop_config.json (Claude Desktop's config): no such file\n" +
				"Give the file to check: mcpgate check-config FILE (a gateway config in JSON or YAML, or a claude_desktop_config.json)\n"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			for name, src := range tc.files {
				path := filepath.Join(home, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := []string{"HOME=" + home, "XDG_CONFIG_HOME=", "MCPGATE_CONFIG=", "PATH=" + bin}
			for _, e := range tc.env {
				env = append(env, strings.ReplaceAll(e, "HOME/", home+"/"))
			}
			stdout, stderr, code := runCheckConfigArgs(t, env)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			for _, want := range tc.stderr {
				if want = strings.ReplaceAll(want, "HOME/", home+"/"); !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if want := strings.ReplaceAll(tc.stdout, "HOME/", home+"/"); !strings.HasPrefix(stdout, want) || want == "" && stdout != "" {
				t.Errorf("stdout:\n%s\nwant it to start with:\n%s", stdout, want)
			}
		})
	}
}
