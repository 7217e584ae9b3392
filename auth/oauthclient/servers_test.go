package oauthclient_test

import (
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// The test servers below play the parts of the MCP conformance suite's
// client scenarios: an authorization server (metadata, registration,
// authorize that redirects at once, token) and a protected MCP endpoint
// that answers 401/403 with Bearer challenges. Both run on loopback.

type asOptions struct {
	metadataPath   string // default /.well-known/oauth-authorization-server
	openID         bool   // serve OpenID Connect style metadata (adds jwks_uri…)
	issuerPath     string // the issuer's path; endpoints live under it
	endpointPrefix string // endpoints under this prefix, issuer unchanged (2025-03-26 backcompat)
	issuerOverride string
	noMetadata     bool // only the default endpoints /authorize, /token, /register
	scopes         []string
	authMethods    []string // token_endpoint_auth_methods_supported; nil: ["none"]
	pkce           []string // code_challenge_methods_supported; nil: ["S256"]
	omitPKCE       bool
	cimd           bool
	noDCR          bool
	grantTypes     []string
	regMethod      string // token_endpoint_auth_method the registration returns
	expiresIn      int
	refresh        bool // issue refresh tokens
	jwtKey         crypto.PublicKey
	idpKey         crypto.PublicKey // verifies ID-JAGs of the JWT bearer grant
	issParam       bool             // send RFC 9207 iss and advertise it
	issSuffix      string           // appended to the iss sent (a variant of the issuer)
	authzError     string           // /authorize redirects with this error
	wrongState     bool
	grant          func(requested []string) []string // scopes granted; default: as requested
	trap           []string                          // paths that must never be requested
	host           string                            // serve https under this name (see newInternet)
	tokenEndpoint  string                            // the metadata's token_endpoint, instead of its own
}

type codeInfo struct {
	challenge, resource, clientID, redirect string
	scopes                                  []string
}

type tokenInfo struct {
	scopes   []string
	resource string
	expiry   time.Time
	revoked  bool
}

type tokenCall struct {
	form  url.Values
	basic string // Authorization header
}

type authServer struct {
	t    *testing.T
	srv  *httptest.Server
	opts asOptions
	now  func() time.Time

	mu            sync.Mutex
	requests      []string // "GET /path"
	authorizes    []url.Values
	tokenCalls    []tokenCall
	registrations []map[string]any
	clients       map[string]string // client_id → secret
	codes         map[string]codeInfo
	tokens        map[string]*tokenInfo
	refreshTokens map[string]codeInfo
	n             int
	redirects     map[string]redirectTo // path → where it redirects
	redirected    []string              // "POST /token grant_type" of the requests it redirected
	// jagResource is the resource ID-JAGs must name (the MCP server's
	// URL); empty: the request's resource parameter.
	jagResource string
	jagSubjects []string // sub of the accepted ID-JAGs
}

func newAuthServer(t *testing.T, o asOptions) *authServer {
	a := &authServer{t: t, opts: o, now: time.Now, clients: map[string]string{}, codes: map[string]codeInfo{},
		tokens: map[string]*tokenInfo{}, refreshTokens: map[string]codeInfo{}}
	a.srv = startServer(t, o.host, http.HandlerFunc(a.serve))
	return a
}

// base is the server's URL as clients know it.
func (a *authServer) base() string { return serverURL(a.srv, a.opts.host) }

// startServer starts a loopback server: plain http, or https known by
// host (a name under example.com, which the test certificate covers).
func startServer(t *testing.T, host string, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	if host == "" {
		srv.Start()
	} else {
		srv.StartTLS()
	}
	t.Cleanup(srv.Close)
	return srv
}

// serverURL is the URL of srv, started by startServer with host.
func serverURL(srv *httptest.Server, host string) string {
	if host == "" {
		return srv.URL
	}
	u, _ := url.Parse(srv.URL)
	return "https://" + net.JoinHostPort(host, u.Port())
}

type redirectTo struct {
	status int
	url    string
}

// redirect makes requests for path answer status, a redirect to to.
func (a *authServer) redirect(path string, status int, to string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.redirects == nil {
		a.redirects = map[string]redirectTo{}
	}
	a.redirects[path] = redirectTo{status, to}
}

func (a *authServer) issuer() string {
	if a.opts.issuerOverride != "" {
		return a.opts.issuerOverride
	}
	// With an endpoint prefix the issuer names it, though the metadata is
	// served at the root: what the conformance suite's 2025-03-26 server
	// does.
	return a.base() + a.opts.issuerPath + a.opts.endpointPrefix
}

func (a *authServer) endpoint(name string) string {
	return a.base() + a.opts.issuerPath + a.opts.endpointPrefix + "/" + name
}

func (a *authServer) metadata() map[string]any {
	m := map[string]any{
		"issuer":                   a.issuer(),
		"authorization_endpoint":   a.endpoint("authorize"),
		"token_endpoint":           a.endpoint("token"),
		"response_types_supported": []string{"code"},
	}
	if !a.opts.noDCR {
		m["registration_endpoint"] = a.endpoint("register")
	}
	if a.opts.grantTypes != nil {
		m["grant_types_supported"] = a.opts.grantTypes
	} else {
		m["grant_types_supported"] = []string{"authorization_code", "refresh_token"}
	}
	if !a.opts.omitPKCE {
		if a.opts.pkce != nil {
			m["code_challenge_methods_supported"] = a.opts.pkce
		} else {
			m["code_challenge_methods_supported"] = []string{"S256"}
		}
	}
	if a.opts.authMethods != nil {
		m["token_endpoint_auth_methods_supported"] = a.opts.authMethods
	} else {
		m["token_endpoint_auth_methods_supported"] = []string{"none"}
	}
	if a.opts.scopes != nil {
		m["scopes_supported"] = a.opts.scopes
	}
	if a.opts.cimd {
		m["client_id_metadata_document_supported"] = true
	}
	if a.opts.issParam {
		m["authorization_response_iss_parameter_supported"] = true
	}
	if a.opts.tokenEndpoint != "" {
		m["token_endpoint"] = a.opts.tokenEndpoint
	}
	if a.opts.openID {
		m["jwks_uri"] = a.base() + "/.well-known/jwks.json"
		m["subject_types_supported"] = []string{"public"}
	}
	return m
}

func (a *authServer) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.requests = append(a.requests, r.Method+" "+r.URL.Path)
	to, redirected := a.redirects[r.URL.Path]
	a.mu.Unlock()
	if redirected {
		r.ParseForm()
		a.mu.Lock()
		a.redirected = append(a.redirected, r.Method+" "+r.URL.Path+" "+r.PostForm.Get("grant_type"))
		a.mu.Unlock()
		http.Redirect(w, r, to.url, to.status)
		return
	}
	if slices.Contains(a.opts.trap, r.URL.Path) {
		a.t.Errorf("the client requested %s, which it must not", r.URL.Path)
		http.NotFound(w, r)
		return
	}
	metaPath := a.opts.metadataPath
	if metaPath == "" {
		metaPath = "/.well-known/oauth-authorization-server"
	}
	prefix := a.opts.issuerPath + a.opts.endpointPrefix
	switch {
	case r.Method == http.MethodGet && r.URL.Path == metaPath && !a.opts.noMetadata:
		writeJSON(w, 200, a.metadata())
	case r.Method == http.MethodGet && r.URL.Path == prefix+"/authorize":
		a.authorize(w, r)
	case r.Method == http.MethodPost && r.URL.Path == prefix+"/token":
		a.token(w, r)
	case r.Method == http.MethodPost && r.URL.Path == prefix+"/register" && !a.opts.noDCR:
		a.register(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (a *authServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	a.authorizes = append(a.authorizes, q)
	a.n++
	code := fmt.Sprintf("code-%d", a.n)
	a.codes[code] = codeInfo{challenge: q.Get("code_challenge"), resource: q.Get("resource"), clientID: q.Get("client_id"),
		redirect: q.Get("redirect_uri"), scopes: strings.Fields(q.Get("scope"))}
	a.mu.Unlock()
	if q.Get("code_challenge_method") != "S256" || q.Get("response_type") != "code" {
		a.t.Errorf("authorization request without PKCE S256 or response_type=code: %v", q)
	}
	to, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || !to.IsAbs() {
		http.Error(w, "bad redirect_uri", 400)
		return
	}
	rq := to.Query()
	if a.opts.authzError != "" {
		rq.Set("error", a.opts.authzError)
	} else {
		rq.Set("code", code)
	}
	state := q.Get("state")
	if a.opts.wrongState {
		state = "forged"
	}
	if state != "" {
		rq.Set("state", state)
	}
	if a.opts.issParam {
		rq.Set("iss", a.issuer()+a.opts.issSuffix)
	}
	to.RawQuery = rq.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (a *authServer) register(w http.ResponseWriter, r *http.Request) {
	var meta map[string]any
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil {
		writeJSON(w, 400, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.registrations = append(a.registrations, meta)
	a.n++
	id := fmt.Sprintf("client-%d", a.n)
	resp := map[string]any{"client_id": id, "client_name": meta["client_name"], "redirect_uris": meta["redirect_uris"]}
	method := a.opts.regMethod
	if method == "" {
		method, _ = meta["token_endpoint_auth_method"].(string)
	}
	if method != "none" {
		secret := "secret-" + id
		a.clients[id] = secret
		resp["client_secret"] = secret
	} else {
		a.clients[id] = ""
	}
	if a.opts.regMethod != "" {
		resp["token_endpoint_auth_method"] = a.opts.regMethod
	}
	writeJSON(w, 201, resp)
}

// preRegister adds a client known beforehand.
func (a *authServer) preRegister(id, secret string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.clients[id] = secret
}

func (a *authServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, 400, map[string]string{"error": "invalid_request"})
		return
	}
	form := r.PostForm
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokenCalls = append(a.tokenCalls, tokenCall{form: form, basic: r.Header.Get("Authorization")})
	clientID, ok := a.authenticate(r, form)
	if !ok {
		writeJSON(w, 401, map[string]string{"error": "invalid_client", "error_description": "client authentication failed"})
		return
	}
	var scopes []string
	resource := form.Get("resource")
	switch form.Get("grant_type") {
	case "authorization_code":
		c, ok := a.codes[form.Get("code")]
		delete(a.codes, form.Get("code"))
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		switch {
		case !ok:
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "unknown code"})
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "PKCE verification failed"})
			return
		case c.clientID != clientID || c.redirect != form.Get("redirect_uri") || c.resource != resource:
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "code issued to another client, redirect or resource"})
			return
		}
		scopes = c.scopes
	case "refresh_token":
		c, ok := a.refreshTokens[form.Get("refresh_token")]
		if !ok || c.clientID != clientID {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(a.refreshTokens, form.Get("refresh_token")) // rotated
		scopes, resource = c.scopes, c.resource
	case "client_credentials":
		scopes = strings.Fields(form.Get("scope"))
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		if err := a.checkIDJAG(form, clientID); err != nil {
			a.t.Errorf("ID-JAG refused: %v", err)
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": err.Error()})
			return
		}
		scopes = strings.Fields(form.Get("scope"))
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	if a.opts.grant != nil {
		scopes = a.opts.grant(scopes)
	}
	a.n++
	tok := fmt.Sprintf("access-%d", a.n)
	exp := a.opts.expiresIn
	if exp == 0 {
		exp = 3600
	}
	a.tokens[tok] = &tokenInfo{scopes: scopes, resource: resource, expiry: a.now().Add(time.Duration(exp) * time.Second)}
	resp := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": exp}
	if len(scopes) > 0 {
		resp["scope"] = strings.Join(scopes, " ")
	}
	if a.opts.refresh {
		rt := fmt.Sprintf("refresh-%d", a.n)
		a.refreshTokens[rt] = codeInfo{clientID: clientID, resource: resource, scopes: scopes}
		resp["refresh_token"] = rt
	}
	writeJSON(w, 200, resp)
}

// checkIDJAG verifies the assertion of a JWT bearer grant as an MCP
// authorization server does an ID-JAG (held with a.mu): the IdP's
// signature, its type, this server as audience, the MCP server as
// resource and the authenticated client as client_id.
func (a *authServer) checkIDJAG(form url.Values, clientID string) error {
	assertion := form.Get("assertion")
	if a.opts.idpKey == nil || assertion == "" {
		return fmt.Errorf("no assertion, or no IdP trusted")
	}
	msg, err := jws.Parse([]byte(assertion))
	if err != nil || len(msg.Signatures()) != 1 {
		return fmt.Errorf("not a JWS: %v", err)
	}
	if typ, _ := msg.Signatures()[0].ProtectedHeaders().Type(); typ != "oauth-id-jag+jwt" {
		return fmt.Errorf("typ %q, want oauth-id-jag+jwt", typ)
	}
	tok, err := jwt.Parse([]byte(assertion), jwt.WithKey(jwa.ES256(), a.opts.idpKey), jwt.WithAudience(a.issuer()), jwt.WithAcceptableSkew(30*time.Second))
	if err != nil {
		return err
	}
	var resource, cid string
	tok.Get("resource", &resource)
	tok.Get("client_id", &cid)
	want := a.jagResource
	if want == "" {
		want = form.Get("resource")
	}
	switch {
	case resource != want || form.Get("resource") != want:
		return fmt.Errorf("resource claim %q, parameter %q, want %q", resource, form.Get("resource"), want)
	case cid != clientID:
		return fmt.Errorf("client_id claim %q, but the client is %q", cid, clientID)
	}
	sub, _ := tok.Subject()
	a.jagSubjects = append(a.jagSubjects, sub)
	return nil
}

// authenticate checks the client's authentication at the token endpoint
// against the methods the metadata lists (held with a.mu).
func (a *authServer) authenticate(r *http.Request, form url.Values) (string, bool) {
	methods := a.opts.authMethods
	if methods == nil {
		methods = []string{"none"}
	}
	if user, pass, ok := r.BasicAuth(); ok {
		id, _ := url.QueryUnescape(user)
		secret, _ := url.QueryUnescape(pass)
		want, known := a.clients[id]
		return id, slices.Contains(methods, "client_secret_basic") && known && want != "" && want == secret
	}
	if assertion := form.Get("client_assertion"); assertion != "" {
		if !slices.Contains(methods, "private_key_jwt") || a.opts.jwtKey == nil ||
			form.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
			return "", false
		}
		tok, err := jwt.Parse([]byte(assertion), jwt.WithKey(jwa.ES256(), a.opts.jwtKey), jwt.WithAudience(a.issuer()), jwt.WithAcceptableSkew(30*time.Second))
		if err != nil {
			a.t.Errorf("client assertion refused: %v", err)
			return "", false
		}
		iss, _ := tok.Issuer()
		sub, _ := tok.Subject()
		_, known := a.clients[iss]
		return iss, known && iss == sub
	}
	id := form.Get("client_id")
	want, known := a.clients[id]
	if strings.HasPrefix(id, "https://") { // a client ID metadata document URL
		known, want = a.opts.cimd, ""
	}
	if secret := form.Get("client_secret"); secret != "" {
		return id, slices.Contains(methods, "client_secret_post") && known && want == secret
	}
	return id, slices.Contains(methods, "none") && known
}

// lookup returns a live token's info, as a resource server's
// introspection would.
func (a *authServer) lookup(tok string) *tokenInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	ti := a.tokens[tok]
	if ti == nil || ti.revoked || a.now().After(ti.expiry) {
		return nil
	}
	c := *ti
	return &c
}

func (a *authServer) revokeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ti := range a.tokens {
		ti.revoked = true
	}
}

func (a *authServer) counts() (authorizes, tokens, registrations int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.authorizes), len(a.tokenCalls), len(a.registrations)
}

func (a *authServer) lastAuthorize() url.Values {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.authorizes) == 0 {
		return nil
	}
	return a.authorizes[len(a.authorizes)-1]
}

func (a *authServer) lastToken() tokenCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.tokenCalls) == 0 {
		return tokenCall{}
	}
	return a.tokenCalls[len(a.tokenCalls)-1]
}

func (a *authServer) requested(path string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.requests {
		if strings.HasSuffix(r, " "+path) {
			return true
		}
	}
	return false
}

type rsOptions struct {
	prmPath      string // where the PRM is; default /.well-known/oauth-protected-resource/mcp
	noPRM        bool
	prmResource  string // override the PRM's resource
	prmScopes    []string
	asURL        string                     // override the PRM's authorization server
	headerPRM    bool                       // resource_metadata in the challenge
	scope        string                     // scope in the 401 challenge
	need         func(body string) []string // scopes a request needs
	alwaysDeny   bool                       // 403 insufficient_scope whatever the token
	noChallenge  bool                       // 401 without WWW-Authenticate (2025-03-26)
	extraHandler func(w http.ResponseWriter, r *http.Request) bool
	host         string // serve https under this name (see newInternet)
	challengePRM string // the challenge's resource_metadata, instead of the PRM's URL
}

type rsRequest struct {
	authz, body, path string
}

type resourceServer struct {
	srv  *httptest.Server
	as   *authServer
	opts rsOptions

	mu       sync.Mutex
	requests []rsRequest
}

func newResourceServer(t *testing.T, as *authServer, o rsOptions) *resourceServer {
	rs := &resourceServer{as: as, opts: o}
	if rs.opts.prmPath == "" {
		rs.opts.prmPath = "/.well-known/oauth-protected-resource/mcp"
	}
	rs.srv = startServer(t, o.host, http.HandlerFunc(rs.serve))
	return rs
}

// base is the server's URL as clients know it.
func (rs *resourceServer) base() string { return serverURL(rs.srv, rs.opts.host) }

func (rs *resourceServer) url() string { return rs.base() + "/mcp" }

// moveTo makes as the server's authorization server: the PRM names it and
// only its tokens are accepted.
func (rs *resourceServer) moveTo(as *authServer) {
	rs.mu.Lock()
	rs.as = as
	rs.mu.Unlock()
}

func (rs *resourceServer) authServer() *authServer {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.as
}

func (rs *resourceServer) prmURL() string { return rs.base() + rs.opts.prmPath }

// resource is the resource identifier the PRM publishes (at the root: the
// origin) and that tokens must be issued for.
func (rs *resourceServer) resource() string {
	switch {
	case rs.opts.prmResource != "":
		return rs.opts.prmResource
	case rs.opts.prmPath == "/.well-known/oauth-protected-resource" && !rs.opts.noPRM:
		return rs.base()
	}
	return rs.base() + "/mcp"
}

func (rs *resourceServer) serve(w http.ResponseWriter, r *http.Request) {
	if rs.opts.extraHandler != nil && rs.opts.extraHandler(w, r) {
		return
	}
	if r.URL.Path == rs.opts.prmPath && !rs.opts.noPRM {
		resource := rs.resource()
		asURL := rs.authServer().issuer()
		if rs.opts.asURL != "" {
			asURL = rs.opts.asURL
		}
		prm := map[string]any{"resource": resource, "authorization_servers": []string{asURL}}
		if rs.opts.prmScopes != nil {
			prm["scopes_supported"] = rs.opts.prmScopes
		}
		writeJSON(w, 200, prm)
		return
	}
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	authz := r.Header.Get("Authorization")
	rs.mu.Lock()
	rs.requests = append(rs.requests, rsRequest{authz: authz, body: string(body), path: r.URL.Path})
	rs.mu.Unlock()
	challenge := func(status int, params ...string) {
		if rs.opts.noChallenge && status == 401 {
			w.WriteHeader(status)
			return
		}
		switch {
		case rs.opts.challengePRM != "":
			params = append(params, fmt.Sprintf("resource_metadata=%q", rs.opts.challengePRM))
		case rs.opts.headerPRM:
			params = append(params, fmt.Sprintf("resource_metadata=%q", rs.prmURL()))
		}
		w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
		w.WriteHeader(status)
	}
	tok, ok := strings.CutPrefix(authz, "Bearer ")
	ti := rs.authServer().lookup(tok)
	if !ok || ti == nil {
		var params []string
		if rs.opts.scope != "" {
			params = append(params, fmt.Sprintf("scope=%q", rs.opts.scope))
		}
		if ok {
			params = append(params, `error="invalid_token"`)
		}
		challenge(401, params...)
		return
	}
	if ti.resource != rs.resource() {
		challenge(401, `error="invalid_token", error_description="wrong audience"`)
		return
	}
	var need []string
	if rs.opts.need != nil {
		need = rs.opts.need(string(body))
	}
	missing := false
	for _, s := range need {
		if !slices.Contains(ti.scopes, s) {
			missing = true
		}
	}
	if missing || rs.opts.alwaysDeny {
		challenge(403, `error="insufficient_scope"`, fmt.Sprintf("scope=%q", strings.Join(need, " ")))
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "ok:%s", body)
}

func (rs *resourceServer) authorizations() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []string
	for _, r := range rs.requests {
		out = append(out, r.authz)
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
