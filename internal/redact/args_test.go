package redact_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/redact"
)

// TestArgsHideTheSecretsOfPublishedServers: the argument lists of
// published MCP servers, as a platform team's configuration starts them
// (with dummy credentials), and what a summary or a log may show of
// them. R stands for redact.Marker.
func TestArgsHideTheSecretsOfPublishedServers(t *testing.T) {
	const R = redact.Marker
	for _, tc := range []struct {
		server     string
		args, want []string
	}{
		{"monday", []string{"-y", "@mondaydotcomorg/monday-api-mcp@3.3.0", "-t", "dummy-monday-token"},
			[]string{"-y", "@mondaydotcomorg/monday-api-mcp@3.3.0", "-t", R}},
		{"twilio", []string{"-y", "@twilio-alpha/mcp@0.7.0", "AC00000000000000000000000000000000/SK00000000000000000000000000000000:dummysecret"},
			[]string{"-y", "@twilio-alpha/mcp@0.7.0", "AC00000000000000000000000000000000/SK" + R}},
		{"neon", []string{"-y", "@neondatabase/mcp-server-neon@0.3.7", "start", "napi_dummy000000000000000000000000000000000000000000000000000000"},
			[]string{"-y", "@neondatabase/mcp-server-neon@0.3.7", "start", "napi_" + R}},
		{"stripe", []string{"-y", "@stripe/mcp@0.2.5", "--tools=all", "--api-key=sk_test_dummy00000000000000000000"},
			[]string{"-y", "@stripe/mcp@0.2.5", "--tools=all", "--api-key=" + R}},
		{"supabase", []string{"-y", "@supabase/mcp-server-supabase@0.13.0", "--access-token", "sbp_dummy0000000000000000000000000000000000", "--features=account,database,debugging,development,functions,branching"},
			[]string{"-y", "@supabase/mcp-server-supabase@0.13.0", "--access-token", R, "--features=account,database,debugging,development,functions,branching"}},
		{"sentry", []string{"-y", "@sentry/mcp-server@0.36.0", "--access-token=sntrys_dummy000000000000000000"},
			[]string{"-y", "@sentry/mcp-server@0.36.0", "--access-token=" + R}},
		{"figma", []string{"-y", "figma-developer-mcp@0.13.2", "--figma-api-key=figd_dummy0000000000000000", "--stdio", "--no-telemetry"},
			[]string{"-y", "figma-developer-mcp@0.13.2", "--figma-api-key=" + R, "--stdio", "--no-telemetry"}},
		{"launchdarkly", []string{"-y", "@launchdarkly/mcp-server@0.6.2", "start", "--api-key", "api-00000000-0000-0000-0000-000000000000"},
			[]string{"-y", "@launchdarkly/mcp-server@0.6.2", "start", "--api-key", R}},
		{"postgres", []string{"-y", "@modelcontextprotocol/server-postgres@0.6.2", "postgresql://postgres:postgres@127.0.0.1:5432/postgres"},
			[]string{"-y", "@modelcontextprotocol/server-postgres@0.6.2", "postgresql://postgres:" + R + "@127.0.0.1:5432/postgres"}},
		// The same secrets where only their shape tells.
		{"shapes alone", []string{"sbp_dummy0000000000000000000000000000000000", "figd_dummy0000000000000000", "sntrys_dummy000000000000000000", "sk_test_dummy00000000000000000000"},
			[]string{"sbp_" + R, "figd_" + R, "sntrys_" + R, "sk_test_" + R}},
		{"a random token alone", []string{"run", "vT9eZIIJvjiwBS21IDfXlSms", "--secret-thing=whgu6evM7xX8b7C5xSMT"},
			[]string{"run", R, "--secret-thing=" + R}},

		// Harmless arguments stay as they are.
		{"filesystem", []string{"-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "${SCRATCH}/sandbox", "/home/ada/scratch/sandbox"}, nil},
		{"everything", []string{"-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"}, nil},
		{"redis", []string{"-y", "@modelcontextprotocol/server-redis@2025.4.25", "redis://127.0.0.1:6379"}, nil},
		{"playwright", []string{"-y", "@playwright/mcp@0.0.83", "--headless", "--isolated"}, nil},
		{"context7", []string{"-y", "@upstash/context7-mcp@4.1.1", "--transport", "stdio"}, nil},
		{"azure-devops", []string{"-y", "@azure-devops/mcp@2.10.0", "contoso", "--authentication", "envvar"}, nil},
		{"apify", []string{"-y", "@apify/actors-mcp-server@0.10.6", "--tools", "actors,docs,runs,storage", "--ui", "off"}, nil},
		{"cloudflare", []string{"-y", "@cloudflare/mcp-server-cloudflare@0.2.0", "run", "00000000000000000000000000000000"}, nil},
		{"postman", []string{"-y", "@postman/postman-mcp-server@2.13.0", "--full"}, nil},
		{"replicate", []string{"-y", "replicate-mcp@0.9.0", "--tools=all"}, nil},
		{"airbnb", []string{"-y", "@openbnb/mcp-server-airbnb@0.3.0", "--ignore-robots-txt"}, nil},
		{"a URL without credentials", []string{"--url", "https://gitlab.com/api/v4", "http://127.0.0.1:8080/mcp?page=2"}, nil},
		{"-t and -k that are not credentials", []string{"run", "-t", "mcp/fetch", "-t", "stdio", "-t", "30", "-k", "https://h/x", "-t", "streamable-http"}, nil},
		{"docker", []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server:v1.2.3"}, nil},
		{"words and ids", []string{"my-server-2026", "3f2a9c4e-8b1d-4c7e-9a2f-6d5e4c3b2a10", "--max-tokens", "512", "C:\\Users\\ada\\Desktop"}, nil},
	} {
		want := tc.want
		if want == nil {
			want = tc.args
		}
		in := slices.Clone(tc.args)
		if got := redact.Args(tc.args); !slices.Equal(got, want) {
			t.Errorf("%s: Args(%q)\n = %q\nwant %q", tc.server, tc.args, got, want)
		}
		if !slices.Equal(in, tc.args) {
			t.Errorf("%s: Args changed its argument", tc.server)
		}
	}
}

func TestToken(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"vT9eZIIJvjiwBS21IDfXlSms", true},
		{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", true},
		{"0b19bb7e6e90f1800864f1decbe98367", true},
		{"9fceb02d0ae598e95dc970b74767f19372d61af8", true}, // a hash, as an argument
		{"00000000000000000000000000000000", false},
		{"abcdefabcdefabcdefabcdefabcdefab", false},
		{"0b19bb7e6e90f1800864f1decbe9836", false}, // 31 hex digits
		{"vT9eZIIJvjiwBS2", false},                 // 15 bytes
		{"my-server-instance-2026", false},
		{"3f2a9c4e-8b1d-4c7e-9a2f-6d5e4c3b2a10", false},
		{"/Users/Ada/Projects2026", false},
		{"Users.Ada.Projects2026", false},
		{"vT9eZIIJvjiwBS21@IDfXlSms", false},
		{"ZHVtbXk6ZHVtbXkxMjM0NTY3OA==", true},
		{"GITHUB_TOKEN=sec-10", false},
		{"Ab1=Cd2=Ef3=Gh4=Ij5=", false},
		{"chrome-devtools-mcp", false},
		{"", false},
	} {
		if got := redact.Token(tc.s); got != tc.want {
			t.Errorf("Token(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestArgsReturnsItsArgumentWhenNothingIsHidden(t *testing.T) {
	args := []string{"-y", "pkg@1.0.0", "stdio"}
	if got := redact.Args(args); &got[0] != &args[0] {
		t.Error("Args copied a list with nothing to hide")
	}
	if got := redact.Args(nil); got != nil {
		t.Errorf("Args(nil) = %q", got)
	}
}

// FuzzArgs: Args never panics, never changes its argument, and is
// idempotent, on arguments cut from any text at spaces.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{"-t dummy-monday-token", "--api-key x --api-key", "-t -k vT9eZIIJvjiwBS21IDfXlSms",
		"--x= --token= -t", "AC0/SK00000000000000000000000000000000:s run 0b19bb7e6e90f1800864f1decbe98367"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, " ")
		in := slices.Clone(args)
		r := redact.Args(args)
		if !slices.Equal(in, args) {
			t.Fatalf("Args changed its argument %q", in)
		}
		if again := redact.Args(r); !slices.Equal(again, r) {
			t.Fatalf("not idempotent:\n in  %q\n once %q\n twice %q", args, r, again)
		}
	})
}
