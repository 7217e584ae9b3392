package auth_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/auth"
)

func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func basicUsers(t *testing.T) *auth.BasicUsers {
	t.Helper()
	hash, err := auth.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	u, err := auth.ParseBasicUsers(strings.NewReader("# users\n\nbob:" + hash + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestBasic(t *testing.T) {
	p := newProtected(t, func(string) auth.Config { return auth.Config{Basic: basicUsers(t)} })
	for _, tt := range []struct{ name, authz string }{
		{"missing", ""},
		{"wrong password", basicAuth("bob", "wrong")},
		{"unknown user", basicAuth("eve", "correct horse")},
		{"no colon", "Basic " + base64.StdEncoding.EncodeToString([]byte("bob"))},
		{"not base64", "Basic %%%"},
		{"bearer instead", "Bearer abc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := p.do(t, call{authz: tt.authz, body: initBody})
			if r.status != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", r.status)
			}
			if got := r.header.Get("Www-Authenticate"); got != `Basic realm="mcpgate", charset="UTF-8"` {
				t.Errorf("WWW-Authenticate %q", got)
			}
		})
	}
	good := basicAuth("bob", "correct horse")
	sid := p.open(t, good)
	r := p.do(t, call{authz: good, session: sid, body: toolCall("whoami")})
	if r.status != http.StatusOK || !strings.Contains(r.body, "basic bob []") {
		t.Fatalf("whoami: %d %s", r.status, r.body)
	}
	// A wrong password is refused even right after the right one was
	// accepted (and remembered).
	if r := p.do(t, call{authz: basicAuth("bob", "correct horsE"), session: sid, body: toolCall("whoami")}); r.status != http.StatusUnauthorized {
		t.Fatalf("wrong password after a good one: %d", r.status)
	}
}

func TestParseBasicUsersErrors(t *testing.T) {
	for _, in := range []string{"", "# only a comment\n", "bob\n", ":$2a$10$abc\n", "bob:plaintext\n"} {
		if _, err := auth.ParseBasicUsers(strings.NewReader(in)); err == nil {
			t.Errorf("ParseBasicUsers(%q) accepted", in)
		}
	}
}

func TestAPIKeys(t *testing.T) {
	key, line := auth.NewAPIKey("ci")
	if !strings.HasPrefix(key, "mcpg_") || strings.Contains(line, key) {
		t.Fatalf("key %q, line %q: the line must hold only the hash", key, line)
	}
	keys, err := auth.ParseAPIKeys(strings.NewReader(line + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := newProtected(t, func(string) auth.Config { return auth.Config{APIKeys: keys} })

	r := p.do(t, call{body: initBody})
	if r.status != http.StatusUnauthorized || r.header.Get("Www-Authenticate") != `Bearer realm="mcpgate"` {
		t.Fatalf("missing key: %d %q", r.status, r.header.Get("Www-Authenticate"))
	}
	r = p.do(t, call{authz: bearer(key + "x"), body: initBody})
	if r.status != http.StatusUnauthorized || !strings.Contains(r.header.Get("Www-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("wrong key: %d %q", r.status, r.header.Get("Www-Authenticate"))
	}
	if r := p.do(t, call{path: "/mcp?api_key=" + key, body: initBody}); r.status != http.StatusBadRequest {
		t.Fatalf("key in the query: %d, want 400", r.status)
	}
	sid := p.open(t, bearer(key))
	r = p.do(t, call{authz: bearer(key), session: sid, body: toolCall("whoami")})
	if r.status != http.StatusOK || !strings.Contains(r.body, "apikey ci []") {
		t.Fatalf("whoami: %d %s", r.status, r.body)
	}
	// Well-known OAuth paths are not served without OAuth.
	if r := p.do(t, call{method: http.MethodGet, path: "/.well-known/oauth-protected-resource/mcp", authz: bearer(key)}); r.status != http.StatusNotFound {
		t.Fatalf("metadata without OAuth: %d, want 404", r.status)
	}
}

func TestParseAPIKeysErrors(t *testing.T) {
	key, _ := auth.NewAPIKey("x")
	for _, in := range []string{"", "ci:" + key + "\n", "ci:sha256:1234\n", ":sha256:" + auth.HashAPIKey(key) + "\n", "ci\n"} {
		if _, err := auth.ParseAPIKeys(strings.NewReader(in)); err == nil {
			t.Errorf("ParseAPIKeys(%q) accepted", in)
		}
	}
}

// Every configured method is offered and accepted, and a session stays
// with the method and name that opened it.
func TestMethodsTogether(t *testing.T) {
	iss := newIssuer(t)
	key, line := auth.NewAPIKey("bob")
	keys, _ := auth.ParseAPIKeys(strings.NewReader(line))
	users := basicUsers(t)
	p := newProtected(t, func(resource string) auth.Config {
		cfg := oauthConfig(t, iss, nil)(resource)
		cfg.Basic, cfg.APIKeys = users, keys
		return cfg
	})
	r := p.do(t, call{body: initBody})
	if got := r.header.Values("Www-Authenticate"); r.status != http.StatusUnauthorized || len(got) != 2 ||
		!strings.HasPrefix(got[0], "Basic ") || !strings.HasPrefix(got[1], "Bearer resource_metadata=") {
		t.Fatalf("challenges %d %q", r.status, got)
	}
	basicSID := p.open(t, basicAuth("bob", "correct horse"))
	p.open(t, bearer(key))
	p.open(t, bearer(iss.token(t, p.resource, nil)))
	// bob the API key is not bob the user.
	if r := p.do(t, call{authz: bearer(key), session: basicSID, body: toolCall("whoami")}); r.status != http.StatusNotFound {
		t.Fatalf("session of basic:bob used by apikey:bob: %d, want 404", r.status)
	}
}
