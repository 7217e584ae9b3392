package redact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/redact"
)

// shape is an entry of testdata/secrets.json (its format is in
// testdata/README.md).
type shape struct {
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	Secret string          `json:"secret"`
	Keep   []string        `json:"keep"`
}

func loadShapes(t *testing.T) []shape {
	t.Helper()
	data, err := os.ReadFile("testdata/secrets.json")
	if err != nil {
		t.Fatal(err)
	}
	var shapes []shape
	if err := json.Unmarshal(data, &shapes); err != nil {
		t.Fatal(err)
	}
	return shapes
}

// text is the input as free text: the string itself, or the object's
// JSON as an error message would quote it.
func (s shape) text() string {
	var str string
	if json.Unmarshal(s.Input, &str) == nil {
		return str
	}
	return string(s.Input)
}

// arguments is the input as tool-call arguments.
func (s shape) arguments() map[string]any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(s.Input))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		panic(err)
	}
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{"command": v}
}

func TestTheShapesFileIsUsable(t *testing.T) {
	shapes := loadShapes(t)
	if len(shapes) < 40 {
		t.Fatalf("%d shapes, want at least 40", len(shapes))
	}
	seen := map[string]string{}
	for _, s := range shapes {
		if s.Name == "" || len(s.Secret) < 6 || !strings.Contains(s.text(), s.Secret) {
			t.Errorf("%q: secret %q is not in its input", s.Name, s.Secret)
		}
		if other, dup := seen[s.Secret]; dup {
			t.Errorf("%q and %q share the secret %q", s.Name, other, s.Secret)
		}
		seen[s.Secret] = s.Name
		for _, k := range s.Keep {
			if strings.Contains(k, s.Secret) || !strings.Contains(s.text(), k) {
				t.Errorf("%q: keep %q is not a neighbour of the secret in the input", s.Name, k)
			}
		}
	}
	for _, s := range shapes {
		for secret, owner := range seen {
			if strings.Contains(s.Name, secret) {
				t.Errorf("the name %q holds %q's secret", s.Name, owner)
			}
		}
	}
}

// TestNoSecretShapeSurvivesAnySink feeds every shape through each way
// the package is used: free text, decoded arguments, JSON text, and log
// records (message, attribute, error, WithAttrs) through both slog
// handlers.
func TestNoSecretShapeSurvivesAnySink(t *testing.T) {
	for _, s := range loadShapes(t) {
		t.Run(s.Name, func(t *testing.T) {
			sinks := map[string]string{}
			sinks["String"] = redact.String(s.text())
			v, err := json.Marshal(redact.Value(s.arguments()))
			if err != nil {
				t.Fatal(err)
			}
			sinks["Value"] = string(v)
			args, _ := json.Marshal(s.arguments())
			j, err := redact.JSON(args)
			if err != nil {
				t.Fatal(err)
			}
			sinks["JSON"] = string(j)
			sinks["JSONHandler"] = logged(s, func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) })
			sinks["TextHandler"] = logged(s, func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) })
			for sink, out := range sinks {
				if strings.Contains(out, s.Secret) {
					t.Errorf("%s shows %q:\n%s", sink, s.Secret, out)
				}
			}
			for _, sink := range []string{"String", "Value", "JSON"} {
				for _, k := range s.Keep {
					if !strings.Contains(sinks[sink], k) && !strings.Contains(sinks[sink], jsonText(k)) {
						t.Errorf("%s lost %q:\n%s", sink, k, sinks[sink])
					}
				}
			}
		})
	}
}

// jsonText is s as it reads inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// logged writes the shape into a log every way the gateway could, and
// returns the log.
func logged(s shape, handler func(*bytes.Buffer) slog.Handler) string {
	var b bytes.Buffer
	log := slog.New(redact.NewHandler(handler(&b)))
	log.Info(s.text())
	log.Info("call", "arguments", s.arguments(), "error", errors.New("upstream: "+s.text()))
	log.With("raw", json.RawMessage(s.Input)).WithGroup("call").Info("call", slog.String("detail", s.text()))
	return b.String()
}

// TestInnocentTextStaysAsItIs: prose, identifiers, hashes, paths and
// LLM parameters that look a little like secrets come through unchanged.
func TestInnocentTextStaysAsItIs(t *testing.T) {
	for _, s := range []string{
		"The author passed the compass through the passage.",
		"Bearer tokens are described in RFC 6750; basic usage: run the tool.",
		"Use Basic HTTP auth or a bearer token",
		"3f2a9c4e-8b1d-4c7e-9a2f-6d5e4c3b2a10",
		"commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"/home/ann/src/tokenizer/passage.go:42:7",
		"risk-assessment-tool-v1234567890123456789",
		"task-sk-1234567890abcdefghij",
		"docker run -u 1000:1000 -v /data:/data image",
		"git commit -m 'fix: token refresh on 401'",
		"sort -u names.txt",
		"sort -t , -k 2 names.txt; docker run -t mcp/fetch; mcp-server -t stdio -t 30s -k https://h/x",
		"node --napi-modules napi_create_reference_for_value napi_get_value_string_utf8",
		"SELECT * FROM users WHERE id = 1 AND author = 'Ann'",
		"email: ann@example.com, mailto:ann@example.com",
		"https://registry.npmjs.org/@scope/pkg",
		"http://localhost:8080/@user/repo?page=2&sort=asc",
		"https://ann@github.com/o/r.git",
		"npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /tmp",
		"max_tokens=1024 input_tokens: 12 token_count=5 auth_type=oauth",
		"pageToken=CAESBggCEAEYAQ nextPageToken: abc progressToken=7",
		"password_min_length: 12, password_file=/run/secrets/db",
		"token_endpoint_auth_method: client_secret_basic",
		"Stripe publishable key pk_live_51HxYzAbCdEfGhIjKlMnOp",
		"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYI\n-----END PUBLIC KEY-----",
		"the string eyJ starts most JWTs",
		"12:30:45 key: user:42 monkey=3 keyboard: qwerty",
		"authority=https://login.example.com oauth_provider_name=github",
		"sklearn sk-learn sk-",
		"",
	} {
		if got := redact.String(s); got != s {
			t.Errorf("String(%q)\n = %q, want it unchanged", s, got)
		}
	}
}

func TestInnocentArgumentsStayAsTheyAre(t *testing.T) {
	for _, in := range []string{
		`{"author": "Ann", "tokens": 12, "max_tokens": 1024, "input_tokens": 7}`,
		`{"key": "user:42", "value": "hello"}`,
		`{"progressToken": "p-1", "pageToken": "CAESBggC", "cursor": "abc"}`,
		`{"auth_required": true, "password": "", "token": null, "use_auth": false}`,
		`{"token_count": 5, "auth_type": "bearer", "password_file": "/run/secrets/db"}`,
		`{"oauth_provider_name": "github", "authority": "https://login.example.com"}`,
		`{"sha": "9fceb02d0ae598e95dc970b74767f19372d61af8", "id": "3f2a9c4e-8b1d-4c7e-9a2f-6d5e4c3b2a10"}`,
		`{"path": "/home/ann/passage.txt", "pass_count": 3, "compass": "N"}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatal(err)
		}
		before, _ := json.Marshal(v)
		after, _ := json.Marshal(redact.Value(v))
		if string(after) != string(before) {
			t.Errorf("Value(%s)\n = %s, want it unchanged", before, after)
		}
	}
}

func TestStringKeepsWhatSurroundsASecret(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgresql://postgres:hunter2@127.0.0.1:5432/postgres", "postgresql://postgres:[redacted]@127.0.0.1:5432/postgres"},
		{"https://h/mcp?api_key=abc&q=1", "https://h/mcp?api_key=[redacted]&q=1"},
		{"https://u:pa/ss@h/x", "https://u:[redacted]@h/x"},
		{"Authorization: Bearer abc.def", "Authorization: Bearer [redacted]"},
		{`{"Authorization":"Bearer abc"}`, `{"Authorization":"[redacted]"}`},
		{`{"password": 1234, "user": "ann"}`, `{"password": [redacted], "user": "ann"}`},
		{`{"secrets": ["a", "b"], "n": 1}`, `{"secrets": [redacted], "n": 1}`},
		{"--api-key=sk_test_x --tools=all", "--api-key=[redacted] --tools=all"},
		{"--api-key X --tools=all", "--api-key [redacted] --tools=all"},
		{"curl -u ann:pw https://h", "curl -u ann:[redacted] https://h"},
		{"--key k1 --keyboard us --max-tokens 9", "--key [redacted] --keyboard us --max-tokens 9"},
		{"<user>ann</user><password>pw1</password><token/>", "<user>ann</user><password>[redacted]</password><token/>"},
		{`password := "pw2"; opts = {'api_key' => 'k2'}`, `password := "[redacted]"; opts = {'api_key' => '[redacted]'}`},
		{"map[password:pw3 user:ann] &{Secret:s4}", "map[password:[redacted] user:ann] &{Secret:[redacted]}"},
		{"token ghp_0123456789abcdefghij0123456789abcdef.", "token ghp_[redacted]."},
		{"AKIAIOSFODNN7EXAMPLE", "AKIA[redacted]"},
		{"npx -y @mondaydotcomorg/monday-api-mcp@3.3.0 -t dummy-monday-token", "npx -y @mondaydotcomorg/monday-api-mcp@3.3.0 -t [redacted]"},
		{"mcp AC00000000000000000000000000000000/SK00000000000000000000000000000000:dummysecret", "mcp AC00000000000000000000000000000000/SK[redacted]"},
		{"mcp start napi_dummy000000000000000000000000000000000000000000000000000000", "mcp start napi_[redacted]"},
		{"AKIAIOSFODNN7EXAMPLEX", "AKIAIOSFODNN7EXAMPLEX"},
		{"a eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln b", "a [redacted] b"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----[redacted]-----END RSA PRIVATE KEY-----"},
		{"password=[redacted] pwd: [redacted]", "password=[redacted] pwd: [redacted]"},
	} {
		if got := redact.String(tc.in); got != tc.want {
			t.Errorf("String(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestName(t *testing.T) {
	secret := []string{
		"password", "Password", "PASSWORD", "passwd", "pass", "pwd", "--pwd", "passphrase", "db_pass",
		"secret", "client_secret", "clientSecret", "secrets", "token", "access_token", "accessToken",
		"GITHUB_PERSONAL_ACCESS_TOKEN", "githubtoken", "id_token", "X-Auth-Token", "X-CSRF-Token",
		"auth", "--auth", "Authorization", "Proxy-Authorization", "bearer", "--bearer",
		"api_key", "api-key", "apiKey", "APIKey", "apikey", "X-Api-Key", "x-api-key", "--x-api-key", "XAPIKEY",
		"session_key", "--session-key", "sessionKey", "private_key", "privateKey", "secret_key", "access_key_id",
		"aws_secret_access_key", "Ocp-Apim-Subscription-Key", "AccountKey", "credential", "credentials",
		"X-Amz-Credential", "X-Amz-Signature", "sig", "cookie", "Cookie", "Set-Cookie", "otp", "pin", "jwt",
		"password1", "passwordHash", "refresh_token_value", "OAuth2Token", "oauth_token", "mfa_code",
	}
	innocent := []string{
		"", "--", "author", "authors", "authority", "authenticated", "oauth", "oauth_provider_name",
		"passage", "compass", "bypass", "passing", "path", "pinned", "spin", "tokenizer", "tokens", "max_tokens",
		"input_tokens", "token_count", "pass_count", "auth_type", "token_type", "token_url", "token_endpoint",
		"token_endpoint_auth_method", "client_secret_expires_at", "password_file", "password_min_length",
		"secret_name", "pageToken", "nextPageToken", "next_page_token", "progressToken", "eos_token",
		"key", "keys", "public_key", "publishable_key", "monkey", "keyboard", "secretary", "user", "username",
		"Mcp-Session-Id", "session_id", "WWW-Authenticate", "auth_required", "author_name",
	}
	for _, n := range secret {
		if !redact.Name(n) {
			t.Errorf("Name(%q) = false, want true", n)
		}
	}
	for _, n := range innocent {
		if redact.Name(n) {
			t.Errorf("Name(%q) = true, want false", n)
		}
	}
}

func TestFlag(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want bool
	}{
		{"--api-key", true}, {"-api-key", true}, {"--pass", true}, {"--pwd", true}, {"--auth", true},
		{"--bearer", true}, {"--passphrase", true}, {"--session-key", true}, {"--x-api-key", true},
		{"--key", true}, {"-KEY", true}, {"--access_token", true},
		{"api-key", false}, {"---api-key", false}, {"--", false}, {"-", false}, {"--api-key=x", false},
		{"--keyboard", false}, {"--max-tokens", false}, {"--tokenizer", false}, {"--author", false},
		{"--token-file", false}, {"--auth-type", false},
	} {
		if got := redact.Flag(tc.arg); got != tc.want {
			t.Errorf("Flag(%q) = %v, want %v", tc.arg, got, tc.want)
		}
	}
}

func TestValueCopiesOnlyWhatChanges(t *testing.T) {
	inner := map[string]any{"host": "h"}
	in := map[string]any{"db": inner, "password": "x", "list": []any{"a", "ghp_0123456789abcdefghij0123456789"}}
	out := redact.Value(in).(map[string]any)
	if in["password"] != "x" || in["list"].([]any)[1] != "ghp_0123456789abcdefghij0123456789" {
		t.Errorf("Value changed its argument: %v", in)
	}
	if out["password"] != redact.Marker || out["list"].([]any)[1] != "ghp_"+redact.Marker {
		t.Errorf("Value = %v", out)
	}
	out["db"].(map[string]any)["host"] = "changed"
	if inner["host"] != "changed" {
		t.Error("an unchanged part was copied")
	}
	same := map[string]any{"a": "b"}
	same2 := redact.Value(same).(map[string]any)
	same2["c"] = "d"
	if len(same) != 2 {
		t.Error("Value of a map with nothing to hide is not the map itself")
	}
}

func TestJSONRejectsWhatIsNotOneValue(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1} {}`, `{"a":1}x`, `[1,]`} {
		if out, err := redact.JSON([]byte(in)); err == nil {
			t.Errorf("JSON(%q) = %s, want an error", in, out)
		}
	}
	// A member given twice: the copy that decoding drops cannot carry a
	// secret into the result.
	out, err := redact.JSON([]byte(`{"x": "ghp_0123456789abcdefghij0123456789", "x": "1", "n": 1.50}`))
	if err != nil || string(out) != `{"n":1.50,"x":"1"}` {
		t.Errorf("JSON = %s, %v", out, err)
	}
}

func TestHandlerRedactsGroupsAttrsAndErrors(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(redact.NewHandler(slog.NewJSONHandler(&b, nil)))
	log.With("token", "t-with-attrs").WithGroup("auth").Info("msg password=p-in-message",
		"user", "ann", "enabled", true)
	log.Info("m", slog.Group("req", slog.String("Authorization", "Bearer b-in-group"), slog.Int("tokens", 12)),
		"err", errors.New("dial postgres://u:p-in-error@h"), "n", 3, "pin", 1234)
	want := []string{
		`"token":"[redacted]"`, `"msg":"msg password=[redacted]"`, `"auth":{"user":"[redacted]","enabled":true}`,
		`"req":{"Authorization":"[redacted]","tokens":12}`, `"err":"dial postgres://u:[redacted]@h"`, `"n":3`, `"pin":"[redacted]"`,
	}
	for _, w := range want {
		if !strings.Contains(b.String(), w) {
			t.Errorf("log lacks %s:\n%s", w, b.String())
		}
	}
	for _, s := range []string{"t-with-attrs", "p-in-message", "b-in-group", "p-in-error", "1234"} {
		if strings.Contains(b.String(), s) {
			t.Errorf("log shows %s", s)
		}
	}
}

type nilError struct{ msg string }

func (e *nilError) Error() string { return e.msg }

func TestHandlerPassesOnValuesThatPanic(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(redact.NewHandler(slog.NewTextHandler(&b, nil)))
	var u *url.URL
	var e *nilError
	log.Info("m", "url", u, "err", error(e), "password", "p-1")
	if !strings.Contains(b.String(), "password=[redacted]") {
		t.Errorf("log: %s", b.String())
	}
}

type config struct {
	URL    string
	Secret string `json:"secret"`
}

func TestHandlerRedactsValuesOfOtherTypes(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(redact.NewHandler(slog.NewJSONHandler(&b, nil)))
	log.InfoContext(context.Background(), "m", "cfg", config{URL: "https://u:p-in-struct@h", Secret: "s-in-struct"},
		"raw", json.RawMessage(`{"api_key":"k-in-raw"}`), "plain", config{URL: "https://h"})
	for _, s := range []string{"p-in-struct", "s-in-struct", "k-in-raw"} {
		if strings.Contains(b.String(), s) {
			t.Errorf("log shows %s:\n%s", s, b.String())
		}
	}
	if !strings.Contains(b.String(), `"plain":{"URL":"https://h","secret":""}`) {
		t.Errorf("a value with nothing to hide changed:\n%s", b.String())
	}
}
