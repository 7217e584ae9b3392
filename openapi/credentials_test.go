package openapi

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// credsSpec declares a scheme of each kind and operations whose security
// requirements differ: the description's own (apiKey in the query), an
// operation's alternatives, an operation that needs none, and one that
// needs two schemes together. Its keyed operation also takes a query
// parameter of the key's name, which the credential must replace.
const credsSpec = `openapi: 3.0.3
info: {title: Creds, version: "1"}
security: [{query_key: []}]
paths:
  /default:
    get:
      operationId: byDefault
      parameters: [{name: key, in: query, schema: {type: string}}, {name: q, in: query, schema: {type: string}}]
      responses: {"204": {description: ok}}
  /either:
    get:
      operationId: either
      security: [{}, {basic: []}, {bearer: []}]
      responses: {"204": {description: ok}}
  /open:
    get:
      operationId: open
      security: []
      responses: {"204": {description: ok}}
  /both:
    get:
      operationId: both
      security: [{header_key: [], cookie_key: []}]
      parameters: [{name: session, in: cookie, schema: {type: string}}, {name: theme, in: cookie, schema: {type: string}}]
      responses: {"204": {description: ok}}
  /oauth:
    get:
      operationId: oauth
      security: [{oauth: [read]}]
      responses: {"204": {description: ok}}
components:
  securitySchemes:
    query_key: {type: apiKey, in: query, name: key}
    header_key: {type: apiKey, in: header, name: X-API-Key}
    cookie_key: {type: apiKey, in: cookie, name: session}
    basic: {type: http, scheme: Basic}
    bearer: {type: http, scheme: bearer}
    oauth:
      type: oauth2
      flows:
        clientCredentials: {tokenUrl: "https://auth.example/token", scopes: {read: r, write: w}}
        authorizationCode: {authorizationUrl: "https://auth.example/authorize", tokenUrl: "https://auth.example/token", scopes: {read: r}}
    mtls: {type: mutualTLS}
`

func credsDoc(t testing.TB) (*Document, map[string]*Tool) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "creds.yaml")
	if err := os.WriteFile(f, []byte(credsSpec), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := mustLoad(t, f, LoadOptions{})
	return doc, toolsOf(t, f)
}

func TestSecuritySchemesAreListedWithTheirFlows(t *testing.T) {
	doc, tools := credsDoc(t)
	var names []string
	var oauth SecurityScheme
	for _, s := range doc.SecuritySchemes() {
		names = append(names, s.Name)
		if s.Name == "oauth" {
			oauth = s
		}
	}
	if want := []string{"basic", "bearer", "cookie_key", "header_key", "mtls", "oauth", "query_key"}; !slices.Equal(names, want) {
		t.Errorf("schemes %v, want %v", names, want)
	}
	if len(oauth.Flows) != 2 || oauth.Flows[0].Kind != "clientCredentials" || oauth.Flows[0].TokenURL != "https://auth.example/token" ||
		!slices.Equal(oauth.Flows[0].Scopes, []string{"read", "write"}) || oauth.Flows[1].AuthorizationURL != "https://auth.example/authorize" {
		t.Errorf("oauth flows %+v", oauth.Flows)
	}
	for name, want := range map[string][][]string{
		"byDefault": {{"query_key"}},
		"either":    {{}, {"basic"}, {"bearer"}},
		"open":      {},
		"both":      {{"cookie_key", "header_key"}},
	} {
		if got := tools[name].Security; !slices.EqualFunc(got, want, slices.Equal) || got == nil {
			t.Errorf("%s: security %v, want %v", name, got, want)
		}
	}
}

// TestCredentialsGoWhereTheSchemeSays: each scheme's value is sent where
// its scheme puts it, for the first alternative that can be met, and
// replaces what an argument set under the same name.
func TestCredentialsGoWhereTheSchemeSays(t *testing.T) {
	doc, tools := credsDoc(t)
	rec := newRecorder(t)
	all := Credentials{"query_key": "k&1", "header_key": "hk", "cookie_key": "ck", "basic": "ann:pa:ss", "bearer": "tok", "oauth": "at"}
	tests := []struct {
		tool    string
		args    map[string]any
		creds   Credentials
		applied []string
		uri     string
		header  map[string]string // "" means absent
	}{
		{"byDefault", map[string]any{"key": "from-the-model", "q": "a b"}, all, []string{"query_key"}, "/base/default?q=a%20b&key=k%261", map[string]string{"Authorization": ""}},
		{"either", nil, all, []string{"basic"}, "/base/either", map[string]string{"Authorization": "Basic YW5uOnBhOnNz"}},
		{"either", nil, Credentials{"bearer": "tok"}, []string{"bearer"}, "/base/either", map[string]string{"Authorization": "Bearer tok"}},
		{"either", nil, Credentials{"header_key": "hk"}, nil, "/base/either", map[string]string{"Authorization": "", "X-Api-Key": ""}},
		{"open", nil, all, nil, "/base/open", map[string]string{"Authorization": "", "X-Api-Key": ""}},
		{"both", map[string]any{"session": "forged", "theme": "dark"}, all, []string{"cookie_key", "header_key"}, "/base/both", map[string]string{"X-Api-Key": "hk", "Cookie": "theme=dark; session=ck"}},
		{"both", nil, Credentials{"header_key": "hk"}, nil, "/base/both", map[string]string{"X-Api-Key": "", "Cookie": ""}},
		{"oauth", nil, all, []string{"oauth"}, "/base/oauth", map[string]string{"Authorization": "Bearer at"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+strings.Join(tt.applied, "+"), func(t *testing.T) {
			base, _ := url.Parse(rec.URL + "/base")
			req, err := tools[tt.tool].BuildRequest(context.Background(), base, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			applied, err := doc.Authorize(tools[tt.tool], req, tt.creds)
			if err != nil || !slices.Equal(applied, tt.applied) {
				t.Fatalf("applied %v, %v; want %v", applied, err, tt.applied)
			}
			resp, err := rec.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			rec.mu.Lock()
			got := rec.last
			rec.mu.Unlock()
			if got.uri != tt.uri {
				t.Errorf("request URI %s, want %s", got.uri, tt.uri)
			}
			for k, v := range tt.header {
				if got.header.Get(k) != v {
					t.Errorf("%s: %q, want %q", k, got.header.Get(k), v)
				}
			}
		})
	}
}

// TestCredentialsTheDescriptionCannotTakeAreRefused: a value for a scheme
// the description does not declare, or that no value can serve, or that
// cannot be sent as its scheme says, is an error naming the scheme and
// never the value.
func TestCredentialsTheDescriptionCannotTakeAreRefused(t *testing.T) {
	doc, tools := credsDoc(t)
	const secret = "s3cr3t-value"
	for _, tt := range []struct {
		creds Credentials
		want  string
	}{
		{Credentials{"nope": secret}, `no security scheme "nope" (it declares basic, bearer, cookie_key`},
		{Credentials{"mtls": secret}, `"mtls" is mutualTLS, which takes no value`},
		{Credentials{"basic": secret}, `"basic" is http basic: give its value as "user:password"`},
		{Credentials{"cookie_key": secret + ";x"}, `"cookie_key" cannot be sent in a cookie`},
		{Credentials{"bearer": secret + "\r\nX-Evil: 1"}, `"bearer" holds a line break`},
	} {
		err := doc.CheckCredentials(tt.creds)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), secret) {
			t.Errorf("%v: %v, want an error with %q and without the value", slices.Collect(func(yield func(string) bool) {
				for k := range tt.creds {
					yield(k)
				}
			}), err, tt.want)
		}
	}
	if err := doc.CheckCredentials(Credentials{"query_key": "k", "basic": "a:b", "oauth": "t"}); err != nil {
		t.Errorf("good credentials: %v", err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/x", nil)
	if _, err := doc.Authorize(tools["either"], req, Credentials{"basic": "no-colon"}); err == nil {
		t.Error("Authorize sent a basic credential without a colon")
	}
}

// FuzzCredentials sends arbitrary credential values beside arbitrary
// arguments of the same names: a value either is refused by
// CheckCredentials or arrives intact, in its place, once, and the
// arguments' other values are left as they were.
func FuzzCredentials(f *testing.F) {
	doc, tools := credsDoc(f)
	base, _ := url.Parse("http://127.0.0.1:9/base")
	for _, v := range hostileValues {
		f.Add(v, v)
	}
	f.Fuzz(func(t *testing.T, value, arg string) {
		within(t, func() {
			creds := Credentials{"query_key": value, "header_key": value, "cookie_key": value}
			if doc.CheckCredentials(creds) != nil {
				return
			}
			req, err := tools["byDefault"].BuildRequest(context.Background(), base, map[string]any{"key": arg, "q": arg})
			if err != nil {
				return
			}
			if _, err := doc.Authorize(tools["byDefault"], req, creds); err != nil {
				t.Fatalf("Authorize after CheckCredentials: %v", err)
			}
			q, err := url.ParseQuery(req.URL.RawQuery)
			if err != nil || len(q["key"]) != 1 || q.Get("key") != value || q.Get("q") != arg {
				t.Errorf("value %q, argument %q: the query is %q", value, arg, req.URL.RawQuery)
			}
			req, err = tools["both"].BuildRequest(context.Background(), base, map[string]any{"session": arg, "theme": "dark"})
			if err != nil {
				return
			}
			if _, err := doc.Authorize(tools["both"], req, creds); err != nil {
				t.Fatalf("Authorize after CheckCredentials: %v", err)
			}
			var sessions []string
			for _, c := range req.Cookies() {
				if c.Name == "session" {
					sessions = append(sessions, c.Value)
				}
			}
			if len(sessions) != 1 || sessions[0] != value || req.Header.Get("X-API-Key") != value {
				t.Errorf("value %q: cookies %q, X-API-Key %q", value, req.Header.Values("Cookie"), req.Header.Get("X-API-Key"))
			}
		})
	})
}

// TestSwaggerSecurityDefinitionsAreSchemes: Swagger 2.0's
// securityDefinitions (basic, apiKey, oauth2 with its flow names) are
// listed as OpenAPI 3 schemes, and a call sends their values alike.
func TestSwaggerSecurityDefinitionsAreSchemes(t *testing.T) {
	f := filepath.Join(t.TempDir(), "swagger.yaml")
	spec := `swagger: "2.0"
info: {title: S, version: "1"}
host: api.example.com
basePath: /v1
securityDefinitions:
  basicAuth: {type: basic}
  key: {type: apiKey, in: query, name: api_key}
  app: {type: oauth2, flow: application, tokenUrl: "https://auth.example.com/token", scopes: {read: r}}
  code: {type: oauth2, flow: accessCode, authorizationUrl: "https://auth.example.com/authorize", tokenUrl: "https://auth.example.com/token", scopes: {read: r}}
security: [{key: []}]
paths:
  /things: {get: {operationId: listThings, responses: {"200": {description: ok}}}}
`
	if err := os.WriteFile(f, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := mustLoad(t, f, LoadOptions{})
	got := map[string]string{}
	for _, s := range doc.SecuritySchemes() {
		desc := s.Type + "/" + s.Scheme + s.In
		for _, fl := range s.Flows {
			desc += " " + fl.Kind + ":" + fl.TokenURL
		}
		got[s.Name] = desc
	}
	want := map[string]string{
		"basicAuth": "http/basic",
		"key":       "apiKey/query",
		"app":       "oauth2/ clientCredentials:https://auth.example.com/token",
		"code":      "oauth2/ authorizationCode:https://auth.example.com/token",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	tools := toolsOf(t, f)
	base, _ := url.Parse("http://127.0.0.1:9/v1")
	req, err := tools["listThings"].BuildRequest(context.Background(), base, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := doc.Authorize(tools["listThings"], req, Credentials{"key": "k1", "basicAuth": "a:b"}); err != nil || req.URL.RawQuery != "api_key=k1" || req.Header.Get("Authorization") != "" {
		t.Errorf("Authorize: %v; query %q, Authorization %q; want the key only", err, req.URL.RawQuery, req.Header.Get("Authorization"))
	}
}
