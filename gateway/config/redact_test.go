package config

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRedactedArgsHideEverySecretFlag: the flags the issue found in logs
// (--pass, --pwd, --auth, --bearer, --passphrase, --session-key,
// --x-api-key), in both spellings, and secrets in other arguments and
// the command; flags that only look similar keep their values.
func TestRedactedArgsHideEverySecretFlag(t *testing.T) {
	for _, tc := range []struct{ args, want []string }{
		{[]string{"--pass", "sec-1", "--pwd=sec-2", "--auth", "sec-3", "--bearer=sec-4"},
			[]string{"--pass", Redaction, "--pwd=" + Redaction, "--auth", Redaction, "--bearer=" + Redaction}},
		{[]string{"--passphrase", "sec-5", "--session-key=sec-6", "--x-api-key", "sec-7", "-api-key", "sec-8", "--key=sec-9"},
			[]string{"--passphrase", Redaction, "--session-key=" + Redaction, "--x-api-key", Redaction, "-api-key", Redaction, "--key=" + Redaction}},
		{[]string{"-e", "GITHUB_TOKEN=sec-10", "ghp_0123456789abcdefghij0123456789abcdef", "https://h/mcp?access_token=sec-11&q=1"},
			[]string{"-e", "GITHUB_TOKEN=" + Redaction, "ghp_" + Redaction, "https://h/mcp?access_token=" + Redaction + "&q=1"}},
		{[]string{"--max-tokens", "512", "--tokenizer", "bpe", "--author", "ann", "--auth-type", "oauth", "--keyboard", "us"},
			[]string{"--max-tokens", "512", "--tokenizer", "bpe", "--author", "ann", "--auth-type", "oauth", "--keyboard", "us"}},
	} {
		args, _ := json.Marshal(tc.args)
		src := `{"mcpServers": {"s": {"command": "env API_TOKEN=sec-cmd npx", "args": ` + string(args) + `}}}`
		c, err := Parse([]byte(src), "c.json", env())
		if err != nil {
			t.Fatal(err)
		}
		r := c.Redacted().Servers["s"]
		if !slices.Equal(r.Args, tc.want) {
			t.Errorf("Redacted args of %q\n = %q\nwant %q", tc.args, r.Args, tc.want)
		}
		if want := "env API_TOKEN=" + Redaction + " npx"; r.Command != want {
			t.Errorf("Redacted command = %q, want %q", r.Command, want)
		}
		if out, _ := json.Marshal(c.Redacted()); strings.Contains(string(out), "sec-") {
			t.Errorf("redacted config shows a secret: %s", out)
		}
	}
}

func TestRedactedURLs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://u:p@h/mcp", "https://u:" + Redaction + "@h/mcp"},
		{"https://h/mcp?api_key=abc&q=1", "https://h/mcp?api_key=" + Redaction + "&q=1"},
		{"https://h/mcp?key=abc&sig=def", "https://h/mcp?key=" + Redaction + "&sig=" + Redaction},
		{"https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX", "https://hooks.slack.com/services/" + Redaction},
		{"https://h/mcp?tokens=5&page=2", "https://h/mcp?tokens=5&page=2"},
	} {
		if got := redactURL(tc.in); got != tc.want {
			t.Errorf("redactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRedactedShowsWhatAValueIs: an interpolated part is hidden for what
// it is (a secret-named variable's value, a token, a password in a URL,
// a key's shape, a value after a secret flag), not for coming from the
// environment: ${SCRATCH}/sandbox is a path and shows. Messages are
// another matter: they hide every interpolated part (TestErrors).
func TestRedactedShowsWhatAValueIs(t *testing.T) {
	lookup := env("SCRATCH", "/home/ada/scratch", "PORT", "8080", "MONDAY_TOKEN", "abc", "API_KEY", "k-1",
		"RANDOM", "vT9eZIIJvjiwBS21IDfXlSms", "DB", "postgres://app:pw-1@db:5432/prod", "GH", "ghp_0123456789abcdefghij0123456789abcdef",
		"MONDAY", "dummy-monday-token", "PLAIN", "abc", "DIR", "work")
	for _, tc := range []struct {
		arg, want string
	}{
		{"${SCRATCH}/sandbox", "/home/ada/scratch/sandbox"},
		{"--port=${PORT}", "--port=8080"},
		{"--dir=${SCRATCH}/${DIR}", "--dir=/home/ada/scratch/work"},
		{"${MONDAY_TOKEN}", Redaction},
		{"x-${MONDAY_TOKEN}-y", "x-" + Redaction + "-y"},
		{"${API_KEY:-none}", Redaction},
		{"${UNSET_SECRET:-dflt}", Redaction},
		{"${RANDOM}", Redaction},
		{"${DB}", "postgres://app:" + Redaction + "@db:5432/prod"},
		{"${GH}", "ghp_" + Redaction},
		{"--api-key=${PLAIN}", "--api-key=" + Redaction},
		{"${PLAIN}", "abc"},
	} {
		src := `{"mcpServers": {"s": {"command": "npx", "args": ["-t", "${MONDAY}", ` + strconv.Quote(tc.arg) + `], "cwd": "${SCRATCH}"}}}`
		c, err := Parse([]byte(src), "c.json", lookup)
		if err != nil {
			t.Fatal(err)
		}
		r := c.Redacted().Servers["s"]
		if want := []string{"-t", Redaction, tc.want}; !slices.Equal(r.Args, want) {
			t.Errorf("Redacted args of %s\n = %q\nwant %q", tc.arg, r.Args, want)
		}
		if r.Cwd != "/home/ada/scratch" {
			t.Errorf("Redacted cwd %q", r.Cwd)
		}
	}
}

// TestRedactedHidesAnOpenAPIServersCredentials: the values for a
// description's security schemes, the server's and a tenant's, and the
// secret-named parts of its spec and base URLs are hidden.
func TestRedactedHidesAnOpenAPIServersCredentials(t *testing.T) {
	src := `mcpServers:
  shop:
    openapi:
      spec: https://specs.example.com/shop.json?token=spec-s3cret
      baseUrl: https://api.example.com/v1
      securitySchemes: { api_key: plain-k3y, basic: "ann:pa55" }
    oauth: { grant: client_credentials, clientId: c, clientSecret: oauth-s3cret, tokenUrl: "https://auth.example.com/token?client_secret=url-s3cret" }
tenants:
  acme:
    principals: ["apikey:acme"]
    credentials:
      shop: { securitySchemes: { api_key: tenant-k3y } }
`
	c, err := Parse([]byte(src), "shop.yaml", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(c.Redacted())
	for _, s := range []string{"spec-s3cret", "plain-k3y", "pa55", "oauth-s3cret", "url-s3cret", "tenant-k3y"} {
		if strings.Contains(string(out), s) {
			t.Errorf("the redacted config holds %q: %s", s, out)
		}
	}
	if r := c.Redacted().Servers["shop"]; r.OpenAPI.BaseURL != "https://api.example.com/v1" || r.OpenAPI.SecuritySchemes["api_key"] != Redaction {
		t.Errorf("redacted openapi %+v", r.OpenAPI)
	}
	if c.Servers["shop"].OpenAPI.SecuritySchemes["api_key"] != "plain-k3y" {
		t.Error("Redacted changed the config")
	}
}
