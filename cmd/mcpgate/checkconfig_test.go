package main

import (
	"bytes"
	"errors"
	"fmt"
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

// TestCheckConfigHidesTheSecretsOfPublishedServers: the 74 published
// servers of a platform team's configuration, as they are started with
// dummy credentials, one file each: what the summary shows of each
// (shown, after the start mode), and the secrets it must not show
// (hidden: secrets in arguments, and env values, which only the names
// of show). ${SCRATCH} holds a path, and shows as one. Last, URLs and
// variables.
func TestCheckConfigHidesTheSecretsOfPublishedServers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake programs are shell scripts")
	}
	env := []string{"PATH=" + fakePrograms(t, "npx"), "SCRATCH=/home/ada/scratch",
		"MONDAY_TOKEN=abc-1", "MONDAY=dummy-monday-token", "RANDOM_ID=vT9eZIIJvjiwBS21IDfXlSms"}
	for _, tc := range []struct {
		name, server string
		hidden       []string
		shown        string
	}{
		{"filesystem", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "${SCRATCH}/sandbox"]}`,
			nil,
			"npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /home/ada/scratch/sandbox"},
		{"memory", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2026.8.31"], "env": {"MEMORY_FILE_PATH": "${SCRATCH}/state/memory.jsonl"}}`,
			nil,
			"npx -y @modelcontextprotocol/server-memory@2026.8.31; env: MEMORY_FILE_PATH"},
		{"everything", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"]}`,
			nil,
			"npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio"},
		{"github", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github@2025.4.8"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_dummy000000000000000000000000000000"}}`,
			[]string{"ghp_dummy000000000000000000000000000000"},
			"npx -y @modelcontextprotocol/server-github@2025.4.8; env: GITHUB_PERSONAL_ACCESS_TOKEN"},
		{"gitlab", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-gitlab@2025.4.25"], "env": {"GITLAB_PERSONAL_ACCESS_TOKEN": "glpat-dummy0000000000000", "GITLAB_API_URL": "https://gitlab.com/api/v4"}}`,
			[]string{"glpat-dummy0000000000000"},
			"npx -y @modelcontextprotocol/server-gitlab@2025.4.25; env: GITLAB_API_URL, GITLAB_PERSONAL_ACCESS_TOKEN"},
		{"postgres", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres@0.6.2", "postgresql://postgres:postgres@127.0.0.1:5432/postgres"]}`,
			[]string{"postgres@127.0.0.1"},
			"npx -y @modelcontextprotocol/server-postgres@0.6.2 postgresql://postgres:[redacted]@127.0.0.1:5432/postgres"},
		{"redis", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-redis@2025.4.25", "redis://127.0.0.1:6379"]}`,
			nil,
			"npx -y @modelcontextprotocol/server-redis@2025.4.25 redis://127.0.0.1:6379"},
		{"brave-search", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-brave-search@0.6.2"], "env": {"BRAVE_API_KEY": "BSA_dummy_key"}}`,
			[]string{"BSA_dummy_key"},
			"npx -y @modelcontextprotocol/server-brave-search@0.6.2; env: BRAVE_API_KEY"},
		{"google-maps", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-google-maps@0.6.2"], "env": {"GOOGLE_MAPS_API_KEY": "AIzaDummyKey000000000000000000000000000"}}`,
			[]string{"AIzaDummyKey000000000000000000000000000"},
			"npx -y @modelcontextprotocol/server-google-maps@0.6.2; env: GOOGLE_MAPS_API_KEY"},
		{"gdrive", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-gdrive@2025.1.14"], "env": {"GDRIVE_CREDENTIALS_PATH": "${SCRATCH}/state/gdrive-credentials.json"}}`,
			nil,
			"npx -y @modelcontextprotocol/server-gdrive@2025.1.14; env: GDRIVE_CREDENTIALS_PATH"},
		{"sequential-thinking", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-sequential-thinking@2026.8.31"], "env": {"DISABLE_THOUGHT_LOGGING": "true"}}`,
			nil,
			"npx -y @modelcontextprotocol/server-sequential-thinking@2026.8.31; env: DISABLE_THOUGHT_LOGGING"},
		{"puppeteer", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-puppeteer@2025.5.12"], "env": {"PUPPETEER_SKIP_DOWNLOAD": "1"}}`,
			nil,
			"npx -y @modelcontextprotocol/server-puppeteer@2025.5.12; env: PUPPETEER_SKIP_DOWNLOAD"},
		{"slack", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-slack@2025.4.25"], "env": {"SLACK_BOT_TOKEN": "xoxb-0000000000-0000000000000-dummydummydummydummy", "SLACK_TEAM_ID": "T00000000"}}`,
			[]string{"xoxb-0000000000-0000000000000-dummydummydummydummy"},
			"npx -y @modelcontextprotocol/server-slack@2025.4.25; env: SLACK_BOT_TOKEN, SLACK_TEAM_ID"},
		{"aws-kb-retrieval", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-aws-kb-retrieval@0.6.2"], "env": {"AWS_ACCESS_KEY_ID": "AKIADUMMYDUMMYDUMMY0", "AWS_SECRET_ACCESS_KEY": "dummydummydummydummydummydummydummydumm", "AWS_REGION": "us-east-1"}}`,
			[]string{"AKIADUMMYDUMMYDUMMY0", "dummydummydummydummydummydummydummydumm"},
			"npx -y @modelcontextprotocol/server-aws-kb-retrieval@0.6.2; env: AWS_ACCESS_KEY_ID, AWS_REGION, AWS_SECRET_ACCESS_KEY"},
		{"everart", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everart@0.6.2"], "env": {"EVERART_API_KEY": "everart-dummy-key"}}`,
			[]string{"everart-dummy-key"},
			"npx -y @modelcontextprotocol/server-everart@0.6.2; env: EVERART_API_KEY"},
		{"playwright", `{"command": "npx", "args": ["-y", "@playwright/mcp@0.0.83", "--headless", "--isolated"]}`,
			nil,
			"npx -y @playwright/mcp@0.0.83 --headless --isolated"},
		{"chrome-devtools", `{"command": "npx", "args": ["-y", "chrome-devtools-mcp@1.11.0", "--headless", "--isolated"], "env": {"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1", "CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS": "1"}}`,
			nil,
			"npx -y chrome-devtools-mcp@1.11.0 --headless --isolated; env: CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS, CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS"},
		{"context7", `{"command": "npx", "args": ["-y", "@upstash/context7-mcp@4.1.1", "--transport", "stdio"], "env": {"CONTEXT7_API_KEY": "ctx7sk-dummy"}}`,
			[]string{"ctx7sk-dummy"},
			"npx -y @upstash/context7-mcp@4.1.1 --transport stdio; env: CONTEXT7_API_KEY"},
		{"supabase", `{"command": "npx", "args": ["-y", "@supabase/mcp-server-supabase@0.13.0", "--access-token", "sbp_dummy0000000000000000000000000000000000", "--features=account,database,debugging,development,functions,branching"]}`,
			[]string{"sbp_dummy0000000000000000000000000000000000"},
			"npx -y @supabase/mcp-server-supabase@0.13.0 --access-token [redacted] --features=account,database,debugging,development,functions,branching"},
		{"notion", `{"command": "npx", "args": ["-y", "@notionhq/notion-mcp-server@2.5.2"], "env": {"NOTION_TOKEN": "ntn_dummy000000000000000000000000000000000000"}}`,
			[]string{"ntn_dummy000000000000000000000000000000000000"},
			"npx -y @notionhq/notion-mcp-server@2.5.2; env: NOTION_TOKEN"},
		{"stripe", `{"command": "npx", "args": ["-y", "@stripe/mcp@0.2.5", "--tools=all", "--api-key=sk_test_dummy00000000000000000000"]}`,
			[]string{"sk_test_dummy00000000000000000000"},
			"npx -y @stripe/mcp@0.2.5 --tools=all --api-key=[redacted]"},
		{"tavily", `{"command": "npx", "args": ["-y", "tavily-mcp@0.2.22"], "env": {"TAVILY_API_KEY": "tvly-dummy0000000000000000"}}`,
			[]string{"tvly-dummy0000000000000000"},
			"npx -y tavily-mcp@0.2.22; env: TAVILY_API_KEY"},
		{"firecrawl", `{"command": "npx", "args": ["-y", "firecrawl-mcp@3.22.2"], "env": {"FIRECRAWL_API_KEY": "fc-dummy00000000000000000000000000"}}`,
			[]string{"fc-dummy00000000000000000000000000"},
			"npx -y firecrawl-mcp@3.22.2; env: FIRECRAWL_API_KEY"},
		{"exa", `{"command": "npx", "args": ["-y", "exa-mcp-server@3.4.1"], "env": {"EXA_API_KEY": "dummy-exa-key"}}`,
			[]string{"dummy-exa-key"},
			"npx -y exa-mcp-server@3.4.1; env: EXA_API_KEY"},
		{"sentry", `{"command": "npx", "args": ["-y", "@sentry/mcp-server@0.36.0", "--access-token=sntrys_dummy000000000000000000"]}`,
			[]string{"sntrys_dummy000000000000000000"},
			"npx -y @sentry/mcp-server@0.36.0 --access-token=[redacted]"},
		{"hubspot", `{"command": "npx", "args": ["-y", "@hubspot/mcp-server@0.4.0"], "env": {"PRIVATE_APP_ACCESS_TOKEN": "pat-na1-00000000-0000-0000-0000-000000000000"}}`,
			[]string{"pat-na1-00000000-0000-0000-0000-000000000000"},
			"npx -y @hubspot/mcp-server@0.4.0; env: PRIVATE_APP_ACCESS_TOKEN"},
		{"airtable", `{"command": "npx", "args": ["-y", "airtable-mcp-server@1.14.0"], "env": {"AIRTABLE_API_KEY": "patDummy00000000.0000000000000000000000000000000000000000000000000000000000000000"}}`,
			[]string{"patDummy00000000.0000000000000000000000000000000000000000000000000000000000000000"},
			"npx -y airtable-mcp-server@1.14.0; env: AIRTABLE_API_KEY"},
		{"azure-devops", `{"command": "npx", "args": ["-y", "@azure-devops/mcp@2.10.0", "contoso", "--authentication", "envvar"], "env": {"ADO_MCP_AUTH_TOKEN": "dummy-ado-token"}}`,
			[]string{"dummy-ado-token"},
			"npx -y @azure-devops/mcp@2.10.0 contoso --authentication envvar; env: ADO_MCP_AUTH_TOKEN"},
		{"gitlab-zereight", `{"command": "npx", "args": ["-y", "@zereight/mcp-gitlab@2.1.64"], "env": {"GITLAB_PERSONAL_ACCESS_TOKEN": "glpat-dummy0000000000000", "GITLAB_API_URL": "https://gitlab.com/api/v4"}}`,
			[]string{"glpat-dummy0000000000000"},
			"npx -y @zereight/mcp-gitlab@2.1.64; env: GITLAB_API_URL, GITLAB_PERSONAL_ACCESS_TOKEN"},
		{"circleci", `{"command": "npx", "args": ["-y", "@circleci/mcp-server-circleci@0.20.0"], "env": {"CIRCLECI_TOKEN": "CCIPAT_dummy_0000000000000000", "DISABLE_TELEMETRY": "true"}}`,
			[]string{"CCIPAT_dummy_0000000000000000"},
			"npx -y @circleci/mcp-server-circleci@0.20.0; env: CIRCLECI_TOKEN, DISABLE_TELEMETRY"},
		{"mongodb", `{"command": "npx", "args": ["-y", "mongodb-mcp-server@3.0.4"], "env": {"MDB_MCP_TELEMETRY": "disabled", "MDB_MCP_API_CLIENT_ID": "mdb_sa_id_dummy", "MDB_MCP_API_CLIENT_SECRET": "mdb_sa_sk_dummy"}}`,
			[]string{"mdb_sa_sk_dummy"},
			"npx -y mongodb-mcp-server@3.0.4; env: MDB_MCP_API_CLIENT_ID, MDB_MCP_API_CLIENT_SECRET, MDB_MCP_TELEMETRY"},
		{"desktop-commander", `{"command": "npx", "args": ["-y", "@wonderwhy-er/desktop-commander@0.2.52"], "env": {"HOME": "${SCRATCH}/home", "DESKTOP_COMMANDER_DISABLE_TELEMETRY": "true"}}`,
			nil,
			"npx -y @wonderwhy-er/desktop-commander@0.2.52; env: DESKTOP_COMMANDER_DISABLE_TELEMETRY, HOME"},
		{"launchdarkly", `{"command": "npx", "args": ["-y", "@launchdarkly/mcp-server@0.6.2", "start", "--api-key", "api-00000000-0000-0000-0000-000000000000"]}`,
			[]string{"api-00000000-0000-0000-0000-000000000000"},
			"npx -y @launchdarkly/mcp-server@0.6.2 start --api-key [redacted]"},
		{"figma", `{"command": "npx", "args": ["-y", "figma-developer-mcp@0.13.2", "--figma-api-key=figd_dummy0000000000000000", "--stdio", "--no-telemetry"]}`,
			[]string{"figd_dummy0000000000000000"},
			"npx -y figma-developer-mcp@0.13.2 --figma-api-key=[redacted] --stdio --no-telemetry"},
		{"playwright-executeautomation", `{"command": "npx", "args": ["-y", "@executeautomation/playwright-mcp-server@1.0.12"]}`,
			nil,
			"npx -y @executeautomation/playwright-mcp-server@1.0.12"},
		{"datadog", `{"command": "npx", "args": ["-y", "@winor30/mcp-server-datadog@1.8.0"], "env": {"DATADOG_API_KEY": "00000000000000000000000000000000", "DATADOG_APP_KEY": "0000000000000000000000000000000000000000", "DATADOG_SITE": "datadoghq.com"}}`,
			[]string{"00000000000000000000000000000000", "0000000000000000000000000000000000000000"},
			"npx -y @winor30/mcp-server-datadog@1.8.0; env: DATADOG_API_KEY, DATADOG_APP_KEY, DATADOG_SITE"},
		{"antv-chart", `{"command": "npx", "args": ["-y", "@antv/mcp-server-chart@0.9.10"]}`,
			nil,
			"npx -y @antv/mcp-server-chart@0.9.10"},
		{"brave-search-official", `{"command": "npx", "args": ["-y", "@brave/brave-search-mcp-server@2.1.4", "--transport", "stdio"], "env": {"BRAVE_API_KEY": "BSA_dummy_key"}}`,
			[]string{"BSA_dummy_key"},
			"npx -y @brave/brave-search-mcp-server@2.1.4 --transport stdio; env: BRAVE_API_KEY"},
		{"perplexity", `{"command": "npx", "args": ["-y", "@perplexity-ai/mcp-server@1.2.1"], "env": {"PERPLEXITY_API_KEY": "pplx-dummy0000000000000000"}}`,
			[]string{"pplx-dummy0000000000000000"},
			"npx -y @perplexity-ai/mcp-server@1.2.1; env: PERPLEXITY_API_KEY"},
		{"heroku", `{"command": "npx", "args": ["-y", "@heroku/mcp-server@1.2.8"], "env": {"HEROKU_API_KEY": "HRKU-dummy-0000000000000000"}}`,
			[]string{"HRKU-dummy-0000000000000000"},
			"npx -y @heroku/mcp-server@1.2.8; env: HEROKU_API_KEY"},
		{"jira-aashari", `{"command": "npx", "args": ["-y", "@aashari/mcp-server-atlassian-jira@3.3.0"], "env": {"ATLASSIAN_SITE_NAME": "example", "ATLASSIAN_USER_EMAIL": "dummy@example.com", "ATLASSIAN_API_TOKEN": "ATATT_dummy"}}`,
			[]string{"ATATT_dummy"},
			"npx -y @aashari/mcp-server-atlassian-jira@3.3.0; env: ATLASSIAN_API_TOKEN, ATLASSIAN_SITE_NAME, ATLASSIAN_USER_EMAIL"},
		{"shortcut", `{"command": "npx", "args": ["-y", "@shortcut/mcp@0.25.0"], "env": {"SHORTCUT_API_TOKEN": "00000000-0000-0000-0000-000000000000"}}`,
			[]string{"00000000-0000-0000-0000-000000000000"},
			"npx -y @shortcut/mcp@0.25.0; env: SHORTCUT_API_TOKEN"},
		{"apify", `{"command": "npx", "args": ["-y", "@apify/actors-mcp-server@0.10.6", "--tools", "actors,docs,runs,storage", "--ui", "off"], "env": {"APIFY_TOKEN": "apify_api_dummy000000000000000000000000000", "TELEMETRY_ENABLED": "false"}}`,
			[]string{"apify_api_dummy000000000000000000000000000"},
			"npx -y @apify/actors-mcp-server@0.10.6 --tools actors,docs,runs,storage --ui off; env: APIFY_TOKEN, TELEMETRY_ENABLED"},
		{"asana", `{"command": "npx", "args": ["-y", "@roychri/mcp-server-asana@1.8.0"], "env": {"ASANA_ACCESS_TOKEN": "2/0000000000000000/0000000000000000:dummy"}}`,
			[]string{"2/0000000000000000/0000000000000000:dummy"},
			"npx -y @roychri/mcp-server-asana@1.8.0; env: ASANA_ACCESS_TOKEN"},
		{"cloudflare", `{"command": "npx", "args": ["-y", "@cloudflare/mcp-server-cloudflare@0.2.0", "run", "00000000000000000000000000000000"], "env": {"CLOUDFLARE_API_TOKEN": "dummy-cf-token-0000000000000000000000"}}`,
			[]string{"dummy-cf-token-0000000000000000000000"},
			"npx -y @cloudflare/mcp-server-cloudflare@0.2.0 run 00000000000000000000000000000000; env: CLOUDFLARE_API_TOKEN"},
		{"eslint", `{"command": "npx", "args": ["-y", "@eslint/mcp@0.3.13"]}`,
			nil,
			"npx -y @eslint/mcp@0.3.13"},
		{"gmail", `{"command": "npx", "args": ["-y", "@gongrzhe/server-gmail-autoauth-mcp@1.1.11"], "env": {"GMAIL_OAUTH_PATH": "${SCRATCH}/state/gcp-oauth.keys.json", "GMAIL_CREDENTIALS_PATH": "${SCRATCH}/state/gmail-credentials.json"}}`,
			nil,
			"npx -y @gongrzhe/server-gmail-autoauth-mcp@1.1.11; env: GMAIL_CREDENTIALS_PATH, GMAIL_OAUTH_PATH"},
		{"google-calendar", `{"command": "npx", "args": ["-y", "@cocal/google-calendar-mcp@2.6.3"], "env": {"GOOGLE_OAUTH_CREDENTIALS": "${SCRATCH}/state/gcp-oauth.keys.json", "GOOGLE_CALENDAR_MCP_TOKEN_PATH": "${SCRATCH}/state/gcal-tokens.json"}}`,
			nil,
			"npx -y @cocal/google-calendar-mcp@2.6.3; env: GOOGLE_CALENDAR_MCP_TOKEN_PATH, GOOGLE_OAUTH_CREDENTIALS"},
		{"kubernetes", `{"command": "npx", "args": ["-y", "mcp-server-kubernetes@4.1.7"], "env": {"ENABLE_TELEMETRY": "false"}}`,
			nil,
			"npx -y mcp-server-kubernetes@4.1.7; env: ENABLE_TELEMETRY"},
		{"linear", `{"command": "npx", "args": ["-y", "@tacticlaunch/mcp-linear@1.4.3"], "env": {"LINEAR_API_TOKEN": "lin_api_dummy0000000000000000000000000000"}}`,
			[]string{"lin_api_dummy0000000000000000000000000000"},
			"npx -y @tacticlaunch/mcp-linear@1.4.3; env: LINEAR_API_TOKEN"},
		{"mapbox", `{"command": "npx", "args": ["-y", "@mapbox/mcp-server@0.2.0"], "env": {"MAPBOX_ACCESS_TOKEN": "pk.eyJ1IjoiZHVtbXkiLCJhIjoiZHVtbXkifQ.ZHVtbXk"}}`,
			[]string{"pk.eyJ1IjoiZHVtbXkiLCJhIjoiZHVtbXkifQ.ZHVtbXk"},
			"npx -y @mapbox/mcp-server@0.2.0; env: MAPBOX_ACCESS_TOKEN"},
		{"pinecone", `{"command": "npx", "args": ["-y", "@pinecone-database/mcp@0.3.0"], "env": {"PINECONE_API_KEY": "pcsk_dummy_0000000000000000"}}`,
			[]string{"pcsk_dummy_0000000000000000"},
			"npx -y @pinecone-database/mcp@0.3.0; env: PINECONE_API_KEY"},
		{"airbnb", `{"command": "npx", "args": ["-y", "@openbnb/mcp-server-airbnb@0.3.0", "--ignore-robots-txt"]}`,
			nil,
			"npx -y @openbnb/mcp-server-airbnb@0.3.0 --ignore-robots-txt"},
		{"git-cyanheads", `{"command": "npx", "args": ["-y", "@cyanheads/git-mcp-server@2.15.3"], "env": {"MCP_TRANSPORT_TYPE": "stdio", "MCP_LOG_LEVEL": "error", "GIT_BASE_DIR": "${SCRATCH}/sandbox"}}`,
			nil,
			"npx -y @cyanheads/git-mcp-server@2.15.3; env: GIT_BASE_DIR, MCP_LOG_LEVEL, MCP_TRANSPORT_TYPE"},
		{"line-bot", `{"command": "npx", "args": ["-y", "@line/line-bot-mcp-server@0.4.2"], "env": {"CHANNEL_ACCESS_TOKEN": "dummy-line-channel-access-token", "DESTINATION_USER_ID": "U00000000000000000000000000000000"}}`,
			[]string{"dummy-line-channel-access-token"},
			"npx -y @line/line-bot-mcp-server@0.4.2; env: CHANNEL_ACCESS_TOKEN, DESTINATION_USER_ID"},
		{"ms-365", `{"command": "npx", "args": ["-y", "@softeria/ms-365-mcp-server@0.155.0", "--org-mode"], "env": {"HOME": "${SCRATCH}/home"}}`,
			nil,
			"npx -y @softeria/ms-365-mcp-server@0.155.0 --org-mode; env: HOME"},
		{"postman", `{"command": "npx", "args": ["-y", "@postman/postman-mcp-server@2.13.0", "--full"], "env": {"POSTMAN_API_KEY": "PMAK-dummy000000000000000000000000-0000000000000000000000000000000000", "POSTMAN_MCP_TELEMETRY": "false"}}`,
			[]string{"PMAK-dummy000000000000000000000000-0000000000000000000000000000000000"},
			"npx -y @postman/postman-mcp-server@2.13.0 --full; env: POSTMAN_API_KEY, POSTMAN_MCP_TELEMETRY"},
		{"replicate", `{"command": "npx", "args": ["-y", "replicate-mcp@0.9.0", "--tools=all"], "env": {"REPLICATE_API_TOKEN": "r8_dummy000000000000000000000000000000000"}}`,
			[]string{"r8_dummy000000000000000000000000000000000"},
			"npx -y replicate-mcp@0.9.0 --tools=all; env: REPLICATE_API_TOKEN"},
		{"argocd", `{"command": "npx", "args": ["-y", "argocd-mcp@0.9.0", "stdio"], "env": {"ARGOCD_BASE_URL": "https://argocd.example.com", "ARGOCD_API_TOKEN": "dummy-argocd-token"}}`,
			[]string{"dummy-argocd-token"},
			"npx -y argocd-mcp@0.9.0 stdio; env: ARGOCD_API_TOKEN, ARGOCD_BASE_URL"},
		{"brightdata", `{"command": "npx", "args": ["-y", "@brightdata/mcp@2.11.3"], "env": {"API_TOKEN": "dummy-brightdata-token", "PRO_MODE": "true"}}`,
			[]string{"dummy-brightdata-token"},
			"npx -y @brightdata/mcp@2.11.3; env: API_TOKEN, PRO_MODE"},
		{"mui", `{"command": "npx", "args": ["-y", "@mui/mcp@0.1.5"]}`,
			nil,
			"npx -y @mui/mcp@0.1.5"},
		{"netlify", `{"command": "npx", "args": ["-y", "@netlify/mcp@1.15.1"], "env": {"NETLIFY_PERSONAL_ACCESS_TOKEN": "nfp_dummy000000000000000000000000"}}`,
			[]string{"nfp_dummy000000000000000000000000"},
			"npx -y @netlify/mcp@1.15.1; env: NETLIFY_PERSONAL_ACCESS_TOKEN"},
		{"searxng", `{"command": "npx", "args": ["-y", "mcp-searxng@1.16.0"], "env": {"SEARXNG_URL": "http://127.0.0.1:8080"}}`,
			nil,
			"npx -y mcp-searxng@1.16.0; env: SEARXNG_URL"},
		{"mermaid", `{"command": "npx", "args": ["-y", "mcp-mermaid@0.4.1"]}`,
			nil,
			"npx -y mcp-mermaid@0.4.1"},
		{"neon", `{"command": "npx", "args": ["-y", "@neondatabase/mcp-server-neon@0.3.7", "start", "napi_dummy000000000000000000000000000000000000000000000000000000"]}`,
			[]string{"dummy000000000000000000000000000000000000000000000000000000"},
			"npx -y @neondatabase/mcp-server-neon@0.3.7 start napi_[redacted]"},
		{"n8n", `{"command": "npx", "args": ["-y", "n8n-mcp@2.87.0"], "env": {"MCP_MODE": "stdio", "LOG_LEVEL": "error", "DISABLE_CONSOLE_OUTPUT": "true", "N8N_API_URL": "http://127.0.0.1:5678", "N8N_API_KEY": "dummy-n8n-api-key"}}`,
			[]string{"dummy-n8n-api-key"},
			"npx -y n8n-mcp@2.87.0; env: DISABLE_CONSOLE_OUTPUT, LOG_LEVEL, MCP_MODE, N8N_API_KEY, N8N_API_URL"},
		{"shopify-dev", `{"command": "npx", "args": ["-y", "@shopify/dev-mcp@1.16.0"], "env": {"OPT_OUT_INSTRUMENTATION": "true"}}`,
			nil,
			"npx -y @shopify/dev-mcp@1.16.0; env: OPT_OUT_INSTRUMENTATION"},
		{"elasticsearch", `{"command": "npx", "args": ["-y", "@elastic/mcp-server-elasticsearch@0.3.1"], "env": {"ES_URL": "http://127.0.0.1:9200", "ES_API_KEY": "ZHVtbXk6ZHVtbXk="}}`,
			[]string{"ZHVtbXk6ZHVtbXk="},
			"npx -y @elastic/mcp-server-elasticsearch@0.3.1; env: ES_API_KEY, ES_URL"},
		{"browserbase", `{"command": "npx", "args": ["-y", "@browserbasehq/mcp-server-browserbase@2.4.3"], "env": {"BROWSERBASE_API_KEY": "bb_live_dummy", "BROWSERBASE_PROJECT_ID": "00000000-0000-0000-0000-000000000000", "GEMINI_API_KEY": "AIzaDummy"}}`,
			[]string{"bb_live_dummy", "AIzaDummy"},
			"npx -y @browserbasehq/mcp-server-browserbase@2.4.3; env: BROWSERBASE_API_KEY, BROWSERBASE_PROJECT_ID, GEMINI_API_KEY"},
		{"mcp-atlassian", `{"command": "npx", "args": ["-y", "mcp-atlassian@2.1.0"], "env": {"ATLASSIAN_BASE_URL": "https://example.atlassian.net", "ATLASSIAN_EMAIL": "dummy@example.com", "ATLASSIAN_API_TOKEN": "ATATT_dummy"}}`,
			[]string{"ATATT_dummy"},
			"npx -y mcp-atlassian@2.1.0; env: ATLASSIAN_API_TOKEN, ATLASSIAN_BASE_URL, ATLASSIAN_EMAIL"},
		{"excel", `{"command": "npx", "args": ["-y", "@negokaz/excel-mcp-server@0.12.0"]}`,
			nil,
			"npx -y @negokaz/excel-mcp-server@0.12.0"},
		{"pdf-reader", `{"command": "npx", "args": ["-y", "@sylphx/pdf-reader-mcp@2.4.0"]}`,
			nil,
			"npx -y @sylphx/pdf-reader-mcp@2.4.0"},
		{"twilio", `{"command": "npx", "args": ["-y", "@twilio-alpha/mcp@0.7.0", "AC00000000000000000000000000000000/SK00000000000000000000000000000000:dummysecret"]}`,
			[]string{"dummysecret", "SK00000000000000000000000000000000"},
			"npx -y @twilio-alpha/mcp@0.7.0 AC00000000000000000000000000000000/SK[redacted]"},
		{"monday", `{"command": "npx", "args": ["-y", "@mondaydotcomorg/monday-api-mcp@3.3.0", "-t", "dummy-monday-token"]}`,
			[]string{"dummy-monday-token"},
			"npx -y @mondaydotcomorg/monday-api-mcp@3.3.0 -t [redacted]"},
		{"remote", `{"url": "https://mcp.example.com/mcp?page=2&q=go"}`,
			nil,
			"https://mcp.example.com/mcp?page=2&q=go"},
		{"remote-credentials", `{"url": "https://ann:pw-url-1@mcp.example.com/mcp?api_key=k-url-2&page=2"}`,
			[]string{"pw-url-1", "k-url-2"},
			"https://ann:[redacted]@mcp.example.com/mcp?api_key=[redacted]&page=2"},
		{"variables", `{"command": "npx", "args": ["--token=${MONDAY_TOKEN}", "-t", "${MONDAY}", "${RANDOM_ID}", "--dir=${SCRATCH}/x", "-k", "https://h/x"]}`,
			[]string{"abc-1", "dummy-monday-token", "vT9eZIIJvjiwBS21IDfXlSms"},
			"npx --token=[redacted] -t [redacted] [redacted] --dir=/home/ada/scratch/x -k https://h/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "c.json")
			if err := os.WriteFile(file, []byte(`{"mcpServers": {"`+tc.name+`": `+tc.server+`}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runCheckConfig(t, file, env...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, "  "+tc.shown+"\n") {
				t.Errorf("stdout lacks %q:\n%s", tc.shown, stdout)
			}
			for _, secret := range tc.hidden {
				if strings.Contains(stdout, secret) {
					t.Errorf("stdout shows %q:\n%s", secret, stdout)
				}
			}
		})
	}
}

// TestCheckConfigWarnsOfManyEagerServers: more than eight command
// servers that start at load (start: eager, in defaults or each) get a
// warning with the memory they take and the remedy, at defaults.start
// or the first server's start; lazy, disabled and URL servers do not
// count.
func TestCheckConfigWarnsOfManyEagerServers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake programs are shell scripts")
	}
	servers := func(n int, kind string) string {
		var b strings.Builder
		for i := range n {
			switch kind {
			case "eager":
				fmt.Fprintf(&b, "  s%d:\n    command: npx\n    start: eager\n", i)
			case "url":
				fmt.Fprintf(&b, "  u%d: {url: https://h%d.example.com/mcp}\n", i, i)
			case "disabled":
				fmt.Fprintf(&b, "  d%d: {command: npx, start: eager, disabled: true}\n", i)
			default:
				fmt.Fprintf(&b, "  l%d: {command: npx}\n", i)
			}
		}
		return b.String()
	}
	const hint = " (hint: write start: lazy (a command server's default: it starts on first use), and set idleTimeout " +
		"(such as defaults: {start: lazy, idleTimeout: 10m}) so that each runs only while it is used)\n"
	for _, tc := range []struct {
		name, src string
		warning   string // "" for none
	}{
		{"nine eager by default", "defaults:\n  start: eager\nmcpServers:\n" + servers(9, "lazy"),
			":2:10: warning: 9 command servers start eagerly (start: eager) and run from load until the gateway stops: " +
				"one run with npx is npm's wrapper plus node, about 100-200 MB, so 9 take about 0.9-1.8 GB before any is used" + hint},
		{"twelve eager each", "mcpServers:\n" + servers(12, "eager"),
			":4:12: warning: 12 command servers start eagerly (start: eager) and run from load until the gateway stops: " +
				"one run with npx is npm's wrapper plus node, about 100-200 MB, so 12 take about 1.2-2.4 GB before any is used" + hint},
		{"eight eager", "mcpServers:\n" + servers(8, "eager") + servers(20, "lazy"), ""},
		{"many lazy", "mcpServers:\n" + servers(74, "lazy"), ""},
		{"eight eager and one disabled", "mcpServers:\n" + servers(8, "eager") + servers(1, "disabled"), ""},
		{"many URLs", "mcpServers:\n" + servers(20, "url"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(file, []byte(tc.src), 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runCheckConfig(t, file, "PATH="+fakePrograms(t, "npx"))
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			want := ""
			if tc.warning != "" {
				want = file + tc.warning
			}
			if stderr != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
			}
		})
	}
}
