package auth_test

import (
	"encoding/base64"
	"fmt"
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

// fakeHash is a bcrypt hash of the given cost as far as loading can tell
// (no password matches it): making real ones of cost 10 and more is slow.
func fakeHash(cost int) string {
	return fmt.Sprintf("$2a$%02d$%s", cost, strings.Repeat("x", 53))
}

func TestParseBasicUsersErrors(t *testing.T) {
	ok := fakeHash(auth.MinBcryptCost)
	for _, tt := range []struct{ in, want string }{
		{"", "no users"},
		{"# only a comment\n", "no users"},
		{"bob\n", "line 1: want name:bcrypt-hash"},
		{":$2a$10$abc\n", "line 1: want name:bcrypt-hash"},
		{"bob:plaintext\n", `line 1: user "bob": not a bcrypt hash`},
		{"# cheap\nbob:" + fakeHash(4) + "\n", `line 2: user "bob": the bcrypt cost is 4, below the least accepted, 10`},
		{"bob:" + fakeHash(9) + "\n", "the bcrypt cost is 9"},
		{"bob:" + ok + "\nbob:" + ok + "\n", `line 2: user "bob" is already on line 1`},
		{"alice#globex:" + ok + "\n", `line 1: user name "alice#globex" contains '#'`},
		{"ali ce:" + ok + "\n", "contains white space (U+0020)"},
		{"al/ice:" + ok + "\n", `contains '/'`},
		{"ali\x7fce:" + ok + "\n", "contains the unprintable character U+007F"},
		{"ali\u200bce:" + ok + "\n", "contains the unprintable character U+200B"},
		{"ali\xffce:" + ok + "\n", "bytes that are not UTF-8"},
	} {
		_, err := auth.ParseBasicUsers(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseBasicUsers(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
	if _, err := auth.ParseBasicUsers(strings.NewReader("alice@example.com:" + ok + "\nbob:" + fakeHash(12) + "\n")); err != nil {
		t.Errorf("good names and costs refused: %v", err)
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
	hash := auth.HashAPIKey(key)
	for _, tt := range []struct{ in, want string }{
		{"", "no keys"},
		{"ci:" + key + "\n", "line 1: want name:sha256:hex"},
		{"ci:sha256:1234\n", `line 1: key "ci": the hash is not 64 hex digits`},
		{":sha256:" + hash + "\n", "line 1: want name:sha256:hex"},
		{"ci\n", "line 1: want name:sha256:hex"},
		{"# keys\nci#prod:sha256:" + hash + "\n", `line 2: key name "ci#prod" contains '#'`},
		{"ci/prod:sha256:" + hash + "\n", `contains '/'`},
		{"ci\tprod:sha256:" + hash + "\n", "contains white space (U+0009)"},
		{"ci\x00:sha256:" + hash + "\n", "contains the unprintable character U+0000"},
	} {
		_, err := auth.ParseAPIKeys(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseAPIKeys(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// Keys tell apart principals whose IDs, or IDs joined to other names, a
// separator in a name could confuse.
func TestPrincipalKeysAreUnambiguous(t *testing.T) {
	for _, tt := range []struct {
		p    *auth.Principal
		want string
	}{
		{nil, ""},
		{&auth.Principal{Method: "basic", Subject: "alice"}, `["basic","","alice"]`},
		{&auth.Principal{Method: "basic", Subject: "alice#globex"}, `["basic","","alice#globex"]`},
		{&auth.Principal{Method: "apikey", Subject: "alice"}, `["apikey","","alice"]`},
		{&auth.Principal{Method: "oauth", Issuer: "https://a.example", Subject: "alice"}, `["oauth","https://a.example","alice"]`},
		{&auth.Principal{Method: "oauth", Issuer: "https://b.example", Subject: "alice"}, `["oauth","https://b.example","alice"]`},
		{&auth.Principal{Method: "oauth", Issuer: "https://a.example\",\"x", Subject: "alice"}, `["oauth","https://a.example\",\"x","alice"]`},
		{&auth.Principal{Method: "oauth", Issuer: "https://a.example", Subject: "x\",\"alice"}, `["oauth","https://a.example","x\",\"alice"]`},
	} {
		if got := tt.p.Key(); got != tt.want {
			t.Errorf("%+v: key %s, want %s", tt.p, got, tt.want)
		}
	}
	// ID stays what configuration files name.
	if id := (&auth.Principal{Method: "apikey", Subject: "ci"}).ID(); id != "apikey:ci" {
		t.Errorf("ID %q", id)
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
