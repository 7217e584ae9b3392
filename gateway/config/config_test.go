package config

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// env returns a lookup over name, value pairs.
func env(kv ...string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1], true
			}
		}
		return "", false
	}
}

func mustLoad(t *testing.T, path string, lookup func(string) (string, bool)) *Config {
	t.Helper()
	c, err := Load(path, lookup)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return c
}

func warnings(c *Config) []string {
	var out []string
	for _, w := range c.Warnings {
		out = append(out, w.Error())
	}
	return out
}

func TestClaudeDesktopVerbatim(t *testing.T) {
	c := mustLoad(t, "testdata/claude_desktop_config.json", env())
	if got := slices.Sorted(mapKeys(c.Servers)); !slices.Equal(got, []string{"filesystem", "github", "sqlite", "weather"}) {
		t.Fatalf("servers %v", got)
	}
	fs := c.Servers["filesystem"]
	want := []string{"-y", "@modelcontextprotocol/server-filesystem", `C:\Users\ada\Desktop`, "/Users/ada/Downloads"}
	if fs.Name != "filesystem" || fs.Command != "npx" || !slices.Equal(fs.Args, want) || fs.Transport() != "stdio" {
		t.Errorf("filesystem %+v", fs)
	}
	if gh := c.Servers["github"]; gh.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "ghp_exampleexampleexampleexample0000" {
		t.Errorf("github env %v", gh.Env)
	}
	wantOpts := ServerOptions{Start: "lazy", Timeout: Duration(30 * time.Second), MaxConcurrency: 32, HealthInterval: Duration(30 * time.Second),
		MaxListItems: DefaultMaxListItems, MaxListBytes: DefaultMaxListBytes, Pins: PinsWarn, StartTimeout: DefaultStartTimeout}
	if fs.ServerOptions != wantOpts || c.Separator != "_" {
		t.Errorf("defaults: %+v separator %q", fs.ServerOptions, c.Separator)
	}
	wantWarn := []string{
		`testdata/claude_desktop_config.json:2:3: key "globalShortcut" ignored`,
		`testdata/claude_desktop_config.json:30:3: key "preferences" ignored`,
		`testdata/claude_desktop_config.json:34:3: key "isUsingBuiltInNodeForMcp" ignored`,
	}
	checkPrefixes(t, warnings(c), wantWarn)
}

func checkPrefixes(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
		return
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("got  %s\nwant %s...", got[i], want[i])
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestUpstreams loads our own Claude Desktop style list, and the shared
// evaluation list beside the repository when there is one.
func TestUpstreams(t *testing.T) {
	for _, path := range []string{"testdata/upstreams.json", "../../../shared/eval/upstreams.json"} {
		t.Run(path, func(t *testing.T) {
			if _, err := os.Stat(path); err != nil {
				t.Skip(err)
			}
			c := mustLoad(t, path, env("SCRATCH", "/tmp/scratch"))
			if len(c.Servers) < 8 || len(c.Warnings) > 0 {
				t.Fatalf("%d servers, warnings %v", len(c.Servers), c.Warnings)
			}
			for name, s := range c.Servers {
				if s.Name != name || s.Transport() != "stdio" || s.Start != "lazy" {
					t.Errorf("%s: %+v", name, s)
				}
			}
			if a := c.Servers["filesystem"].Args; a[len(a)-1] != "/tmp/scratch/sandbox" {
				t.Errorf("filesystem args %v", a)
			}
			_, err := Load(path, env())
			if err == nil || !strings.Contains(err.Error(), "environment variable SCRATCH is not set") {
				t.Errorf("without SCRATCH: %v", err)
			}
		})
	}
	_, err := Load("testdata/upstreams.json", env())
	checkPrefixes(t, strings.Split(err.Error(), "\n"), []string{
		"testdata/upstreams.json:5:75: environment variable SCRATCH is not set (hint: set it, or give a default: ${SCRATCH:-value})",
		"testdata/upstreams.json:10:35: environment variable SCRATCH",
		"testdata/upstreams.json:31:62: environment variable SCRATCH",
	})
}

func TestVSCode(t *testing.T) {
	c := mustLoad(t, "testdata/vscode_mcp.json", env("API_KEY", "k-123"))
	if s := c.Servers["fetch"]; s.Type != "stdio" || s.Command != "uvx" || s.Transport() != "stdio" || s.Start != "lazy" {
		t.Errorf("fetch %+v", s)
	}
	if s := c.Servers["remote"]; s.Transport() != "http" || s.Headers["Authorization"] != "Bearer k-123" || s.Start != "eager" {
		t.Errorf("remote %+v", s)
	}
	if s := c.Servers["legacy"]; s.Transport() != "sse" {
		t.Errorf("legacy %+v", s)
	}
	checkPrefixes(t, warnings(c), []string{
		`testdata/vscode_mcp.json:3:3: VS Code's inputs are ignored`,
		`testdata/vscode_mcp.json:12:7: key "envFile" ignored (hint: VS Code's envFile is not read`,
	})
}

var fullEnv = env("SCRATCH", "/home/ada/scratch", "SEARCH_TOKEN", "tok-s3cret", "CRM_SECRET", "crm-s3cret")

// TestYAMLMatchesJSON loads one config written both ways: the YAML with
// an anchor and a merge key, the JSON spelled out.
func TestYAMLMatchesJSON(t *testing.T) {
	y := mustLoad(t, "testdata/full.yaml", fullEnv)
	j := mustLoad(t, "testdata/full.json", fullEnv)
	if !reflect.DeepEqual(y.Servers, j.Servers) {
		a, _ := json.MarshalIndent(y.Servers, "", " ")
		b, _ := json.MarshalIndent(j.Servers, "", " ")
		t.Errorf("servers differ:\nYAML %s\nJSON %s", a, b)
	}
	if y.Listen != j.Listen || y.Separator != j.Separator || y.Builtins != j.Builtins || y.Defaults != j.Defaults {
		t.Errorf("YAML %+v\nJSON %+v", y, j)
	}
	checkPrefixes(t, warnings(y), []string{"testdata/full.yaml:43:12: environment variable OLD_KEY is not set (hint: the server is disabled"})
	checkPrefixes(t, warnings(j), []string{"testdata/full.json:35:73: environment variable OLD_KEY is not set"})

	c := y
	if c.Listen != "127.0.0.1:8765" || c.Separator != "." || !c.Builtins.Tasks || c.Builtins.TasksDB != "/home/ada/scratch/tasks.db" {
		t.Errorf("top level %+v", c)
	}
	fs := c.Servers["filesystem"]
	wantFS := ServerOptions{Start: "lazy", IdleTimeout: Duration(5 * time.Minute), Timeout: Duration(time.Minute),
		MaxConcurrency: 8, ProtocolVersion: "auto", HealthInterval: DefaultHealthInterval,
		MaxListItems: DefaultMaxListItems, MaxListBytes: DefaultMaxListBytes, Pins: PinsWarn, StartTimeout: DefaultStartTimeout}
	if fs.Command != "npx" || fs.ServerOptions != wantFS {
		t.Errorf("filesystem %+v", fs)
	}
	if fs.Tools.Rename["read_text_file"] != "read" || !slices.Equal(fs.Tools.Deny, []string{"write_*", "move_file"}) ||
		!reflect.DeepEqual(fs.Tools.Meta["read_text_file"], map[string]any{"category": "files", "cost": 1.0, "tags": []any{"io", "read"}}) {
		t.Errorf("filesystem tools %+v", fs.Tools)
	}
	if s := c.Servers["search"]; s.Start != "lazy" || s.HealthInterval != Duration(-time.Second) || s.BearerToken != "tok-s3cret" || s.Transport() != "http" {
		t.Errorf("search %+v", s)
	}
	if s := c.Servers["crm"]; s.Start != "eager" || s.ProtocolVersion != "2025-06-18" || s.OAuth.ClientSecret != "crm-s3cret" || s.MaxConcurrency != 8 {
		t.Errorf("crm %+v %+v", s, s.OAuth)
	}
	if s := c.Servers["old"]; !s.Disabled || s.Env["KEY"] != "" {
		t.Errorf("old %+v", s)
	}
}

func TestRedacted(t *testing.T) {
	secrets := []string{"tok-s3cret", "crm-s3cret", "hunter2", "sk_test_example", "api-example-key",
		"ghp_exampleexampleexampleexample0000", "k-123"}
	for _, f := range []struct {
		path   string
		lookup func(string) (string, bool)
	}{
		{"testdata/full.yaml", fullEnv},
		{"testdata/upstreams.json", env("SCRATCH", "/home/ada/scratch")},
		{"testdata/claude_desktop_config.json", env()},
		{"testdata/vscode_mcp.json", env("API_KEY", "k-123")},
	} {
		c := mustLoad(t, f.path, f.lookup)
		before, _ := json.Marshal(c)
		out, err := json.Marshal(c.Redacted())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(string(out), s) {
				t.Errorf("%s: redacted config holds %q:\n%s", f.path, s, out)
			}
		}
		if after, _ := json.Marshal(c); string(after) != string(before) {
			t.Errorf("%s: Redacted changed the config", f.path)
		}
	}

	r := mustLoad(t, "testdata/full.yaml", fullEnv).Redacted()
	fs, search, crm := r.Servers["filesystem"], r.Servers["search"], r.Servers["crm"]
	// ${SCRATCH} and ${PORT:-8765} hold no secret: they show.
	if fs.Args[2] != "/home/ada/scratch/sandbox" || r.Builtins.TasksDB != "/home/ada/scratch/tasks.db" || r.Listen != "127.0.0.1:8765" {
		t.Errorf("interpolated parts: %q %q %q", fs.Args, r.Builtins.TasksDB, r.Listen)
	}
	if search.BearerToken != Redaction || crm.OAuth.ClientSecret != Redaction || crm.OAuth.ClientID != "mcpgate" {
		t.Errorf("credentials: %q %+v", search.BearerToken, crm.OAuth)
	}
	u := mustLoad(t, "testdata/upstreams.json", env("SCRATCH", "/s")).Redacted()
	if a := u.Servers["postgres"].Args; a[2] != "postgresql://postgres:[redacted]@127.0.0.1:5432/postgres" {
		t.Errorf("postgres %q", a)
	}
	if a := u.Servers["stripe"].Args; a[3] != "--api-key=[redacted]" || a[2] != "--tools=all" {
		t.Errorf("stripe %q", a)
	}
	if a := u.Servers["launchdarkly"].Args; a[4] != "[redacted]" || a[3] != "--api-key" {
		t.Errorf("launchdarkly %q", a)
	}
	if e := u.Servers["memory"].Env; e["MEMORY_FILE_PATH"] != Redaction {
		t.Errorf("env %q", e)
	}
	if got := redactURL("https://h/mcp?api_key=abc&q=1"); got != "https://h/mcp?api_key=[redacted]&q=1" {
		t.Errorf("query: %s", got)
	}
}

func TestDurations(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{`"30s"`, 30 * time.Second},
		{`"5m"`, 5 * time.Minute},
		{`"1h30m"`, 90 * time.Minute},
		{`45`, 45 * time.Second},
		{`1.5`, 1500 * time.Millisecond},
		{`"90"`, 90 * time.Second},
		{`"${T:-2m}"`, 2 * time.Minute},
	} {
		c, err := Parse([]byte(`{"mcpServers": {"a": {"command": "x", "timeout": `+tc.in+`}}}`), "d.json", env())
		if err != nil || c.Servers["a"].Timeout.D() != tc.want {
			t.Errorf("%s: %v %v", tc.in, c, err)
		}
	}
}

// TestJSONDialects: valid JSON the YAML parser would refuse, and the
// comments and trailing commas of VS Code's files.
func TestJSONDialects(t *testing.T) {
	for _, tc := range []struct{ name, file, src, want string }{
		{"slash escape", "c.json", `{"mcpServers": {"a": {"command": "C:\/bin\/x"}}}`, "C:/bin/x"},
		{"surrogate pair", "c.json", `{"mcpServers": {"a": {"command": "\ud83d\ude00"}}}`, "😀"},
		{"tabs", "c.json", "{\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"x\"}\n\t}\n}", "x"},
		{"byte order mark", "c.json", "\xef\xbb\xbf{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}", "x"},
		{"comments", "c.json", "// top\n{\"mcpServers\": /* here */ {\"a\": {\"command\": \"x // not a comment\"}}}", "x // not a comment"},
		{"trailing commas", "c.json", `{"mcpServers": {"a": {"command": "x", "args": ["y",],},},}`, "x"},
		{"JSON without extension", "config", `{"mcpServers": {"a": {"command": "x"}}}`, "x"},
		{"YAML without extension", "config", "mcpServers:\n  a:\n    command: x\n", "x"},
		{"YAML flow", "c.yaml", `{mcpServers: {a: {command: x}}}`, "x"},
	} {
		c, err := Parse([]byte(tc.src), tc.file, env())
		if err != nil || c.Servers["a"].Command != tc.want {
			t.Errorf("%s: %v %+v", tc.name, err, c)
		}
	}
}

func TestAliasExpansionBounded(t *testing.T) {
	src := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'i'; i++ {
		src += string(i) + ": &" + string(i) + " [" + strings.Repeat("*"+string(i-1)+", ", 9) + "*" + string(i-1) + "]\n"
	}
	src += "mcpServers:\n  s:\n    command: x\n    tools:\n      meta:\n        t: {v: *i}\n"
	start := time.Now()
	_, err := Parse([]byte(src), "bomb.yaml", env())
	if err == nil || !strings.Contains(err.Error(), "aliases") || time.Since(start) > 10*time.Second {
		t.Errorf("%v after %v", err, time.Since(start))
	}
	_, err = Parse([]byte("mcpServers: &m {s: {command: x, tools: {meta: {t: {v: *m}}}}}\n"), "loop.yaml", env())
	if err == nil {
		t.Error("a self-referencing alias loaded")
	}
}

func TestValidateInCode(t *testing.T) {
	c := &Config{Servers: map[string]*Server{
		"ok":  {Command: "x"},
		"bad": {Command: "x", URL: "https://h/mcp"},
	}}
	err := c.Validate()
	if err == nil || err.Error() != "both command and url are set (hint: a server is a command (stdio) or a url (HTTP): keep one)" {
		t.Errorf("%v", err)
	}
	delete(c.Servers, "bad")
	c.ApplyDefaults()
	if err := c.Validate(); err != nil || c.Servers["ok"].Name != "ok" || c.Servers["ok"].Start != "lazy" {
		t.Errorf("%v %+v", err, c.Servers["ok"])
	}
}

func TestFixName(t *testing.T) {
	taken := map[string]bool{"github": true}
	for in, want := range map[string]string{
		"Brave_Search":          "brave-search",
		"My Server!":            "my-server",
		"1password":             "mcp-1password",
		"GitHub":                "github-2",
		"__":                    "mcp",
		strings.Repeat("a", 40): strings.Repeat("a", 32),
	} {
		if got := fixName(in, taken); got != want || !serverName.MatchString(got) {
			t.Errorf("fixName(%q) = %q, want %q", in, got, want)
		}
	}
}

// A server's client features fall back feature by feature to the
// defaults', then to the gateway's (elicitation on, sampling and roots
// off).
func TestClientFeaturesDefaults(t *testing.T) {
	c, err := Parse([]byte(`{"defaults": {"clientFeatures": {"sampling": true}},
		"mcpServers": {"a": {"command": "x"}, "b": {"command": "x", "clientFeatures": {"sampling": false, "roots": true}}, "c": {"command": "x", "clientFeatures": {"elicitation": false}}},
		"tenants": {"t": {"pins": "approve", "clientFeatures": {"a": {"roots": true}}}}}`), "c.json", env())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][3]bool{"a": {true, true, false}, "b": {false, true, true}, "c": {true, false, false}} {
		s, e, r := c.Servers[name].ClientFeatures.Granted()
		if [3]bool{s, e, r} != want {
			t.Errorf("%s: sampling, elicitation, roots = %v %v %v, want %v", name, s, e, r, want)
		}
	}
	if tf := c.Tenants["t"].ClientFeatures["a"]; tf == nil || tf.Roots == nil || !*tf.Roots || c.Tenants["t"].Pins != PinsApprove {
		t.Errorf("tenant t: %+v", c.Tenants["t"])
	}
}

// TestLooseJSONWarns: mcpgate reads comments, trailing commas and a byte
// order mark, but Claude Desktop refuses the whole file over any of them,
// so a .json file that has one gets a warning at the first place, naming
// the others. Files that say they are JSON with comments do not.
func TestLooseJSONWarns(t *testing.T) {
	const hint = " (hint: mcpgate reads it, but Claude Desktop and other clients that read the file as strict JSON refuse all of it: "
	for _, tc := range []struct {
		name, file, src string
		want            string // after FILE:LINE:COL: at the marker; "" for no warning
	}{
		{"trailing comma", "c.json", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [\"y\"»,]}}}",
			"not strict JSON: a trailing comma" + hint + "delete the comma)"},
		{"line comment", "claude_desktop_config.json", "{\n  »// mine\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}}\n}",
			"not strict JSON: a comment" + hint + "delete the comment)"},
		{"block comment", "c.JSON", "{\"mcpServers\": »/* x */ {\"a\": {\"command\": \"x\"}}}",
			"not strict JSON: a comment"},
		{"the first of several", "c.json", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}»,\n    // b\n  },\n}\n",
			"not strict JSON: a trailing comma (and 2 more places: 4:5, 5:4)" + hint + "delete the comma, and the same at the other places)"},
		{"many", "c.json", "{\"mcpServers\": {\"a\": {\"command\": \"x\"»,}}}\n" + strings.Repeat("//\n", 7),
			"not strict JSON: a trailing comma (and 7 more places: 2:1, 3:1, 4:1, 5:1, 6:1, ...)"},
		{"byte order mark", "c.json", "»\xef\xbb\xbf{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}",
			"not strict JSON: a byte order mark" + hint + "save the file as UTF-8 without a byte order mark (BOM))"},
		{"strict", "c.json", `{"mcpServers": {"a": {"command": "x", "args": ["a,]", "//b", "/*c*/"]}}}`, ""},
		{"jsonc", "c.jsonc", `{"mcpServers": {"a": {"command": "x",},}} // VS Code style`, ""},
		{"VS Code's mcp.json", "mcp.json", `{"servers": {"a": {"command": "x",},}} // VS Code reads JSONC`, ""},
		{"JSON without extension", "config", `{"mcpServers": {"a": {"command": "x",},}}`, ""},
		{"YAML", "c.yaml", "mcpServers: {a: {command: x,},}\n# comment\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, at := markers(tc.src)
			c, err := Parse([]byte(src), tc.file, env())
			if err != nil {
				t.Fatal(err)
			}
			got := warnings(c)
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("warnings: %q", got)
				}
				return
			}
			want := fmt.Sprintf("%s:%d:%d: %s", tc.file, at[0].Line, at[0].Col, tc.want)
			if len(got) != 1 || !strings.HasPrefix(got[0], want) {
				t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(got, "\n"), want)
			}
		})
	}
}
