package oauthclient_test

import (
	"reflect"
	"testing"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
)

func TestParseWWWAuthenticate(t *testing.T) {
	type c = oauthclient.Challenge
	type m = map[string]string
	tests := []struct {
		name   string
		values []string
		want   []oauthclient.Challenge
	}{
		{"bare", []string{"Bearer"}, []c{{"bearer", m{}}}},
		{"params", []string{`Bearer resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", scope="a b"`},
			[]c{{"bearer", m{"resource_metadata": "https://h/.well-known/oauth-protected-resource/mcp", "scope": "a b"}}}},
		{"insufficient scope", []string{`Bearer error="insufficient_scope", scope="mcp:admin", error_description="no \"admin\", sorry"`},
			[]c{{"bearer", m{"error": "insufficient_scope", "scope": "mcp:admin", "error_description": `no "admin", sorry`}}}},
		{"case and spacing", []string{`BEARER   Scope = "x" ,Error=invalid_token`}, []c{{"bearer", m{"scope": "x", "error": "invalid_token"}}}},
		{"two challenges in one header", []string{`Basic realm="mcp, gate", charset="UTF-8", Bearer resource_metadata="u"`},
			[]c{{"basic", m{"realm": "mcp, gate", "charset": "UTF-8"}}, {"bearer", m{"resource_metadata": "u"}}}},
		{"two headers", []string{`Basic realm="x"`, `Bearer scope="s"`}, []c{{"basic", m{"realm": "x"}}, {"bearer", m{"scope": "s"}}}},
		{"token68", []string{`Negotiate abc==, Bearer scope="s"`}, []c{{"negotiate", m{"": "abc=="}}, {"bearer", m{"scope": "s"}}}},
		{"unterminated quote", []string{`Bearer scope="a b`}, []c{{"bearer", m{"scope": "a b"}}}},
		{"garbage", []string{`, ,=, "x"`}, nil},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := oauthclient.ParseWWWAuthenticate(tt.values)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func FuzzParseWWWAuthenticate(f *testing.F) {
	f.Add(`Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/y"`)
	f.Add(`Basic realm="a\"b", Negotiate abc==`)
	f.Fuzz(func(t *testing.T, s string) {
		oauthclient.ParseWWWAuthenticate([]string{s}) // must not panic or hang
	})
}
