package gateway

// REST API upstreams: a server whose config has openapi is served by an
// MCP server in this process, one tool per operation of its description
// (package openapi), whose calls go to the API over HTTP. The gateway
// reaches it through the same client as any upstream (localTransport),
// so prefixing, tenants, limits, timeouts, pins, audit, tool search and
// reload apply to it unchanged.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/internal/redact"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/openapi"
)

// largeAPITools is how many tools make a REST API large: one whose
// listing nobody set (toolSearch.servers, toolSearch.listing, the
// tenant's toolListing) is in search mode rather than full, so that a
// client sees the meta-tools and the few tools a search finds, not
// hundreds of definitions (GitHub's description maps to 1,223).
const largeAPITools = 100

// maxSkippedLogged bounds the operations named in the log line of a
// description that maps with some left out.
const maxSkippedLogged = 10

// openAPIServer loads c's description and returns the MCP server of its
// operations. A description that cannot be read or has no base URL is
// an error of the connection, retried as a server that does not start.
func (u *upstream) openAPIServer(ctx context.Context, c *config.Server) (*mcp.Server, error) {
	o := c.OpenAPI
	doc, err := openapi.Load(ctx, o.Spec, openapi.LoadOptions{AllowRemoteRefs: o.AllowRemoteRefs})
	if err != nil {
		return nil, fmt.Errorf("the OpenAPI description: %w", err)
	}
	base, err := openAPIBase(o.BaseURL, doc.Servers())
	if err != nil {
		return nil, err
	}
	tools, skipped := openapi.Tools(doc, openapi.MapOptions{Include: o.Include, Exclude: o.Exclude, NoOutputSchema: o.NoOutputSchema})
	if len(skipped) > 0 {
		var some []string
		for _, s := range skipped[:min(len(skipped), maxSkippedLogged)] {
			some = append(some, fmt.Sprintf("%s %s (%s: %s)", s.Method, s.Path, s.Reason, s.Detail))
		}
		u.logger.Warn("gateway: operations of the OpenAPI description left out", "skipped", len(skipped), "mapped", len(tools), "first", some)
	}
	var elsewhere []string
	for _, t := range tools {
		if len(t.Servers) > 0 {
			elsewhere = append(elsewhere, t.Tool.Name)
		}
	}
	if len(elsewhere) > 0 {
		// Their credentials would go to another origin: calls stay on
		// the base URL, and the operator is told.
		u.logger.Warn("gateway: operations of the OpenAPI description name servers of their own; their calls go to the base URL all the same",
			"operations", len(elsewhere), "first", elsewhere[:min(len(elsewhere), maxSkippedLogged)])
	}
	if len(tools) == 0 {
		return nil, fmt.Errorf("the OpenAPI description maps to no tool (%d operations left out; check include and exclude)", len(skipped))
	}
	u.largeAPI.Store(len(tools) > largeAPITools)
	creds := openapi.Credentials(o.SecuritySchemes)
	if err := doc.CheckCredentials(creds); err != nil {
		return nil, fmt.Errorf("openapi.securitySchemes: %w", err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: cmp.Or(doc.Title(), c.Name), Version: cmp.Or(doc.Version(), "0")}, nil)
	// No Timeout on the client: the call's context carries the upstream's
	// timeout (paused while a call waits for its client, absent for a
	// task's call), and a second clock racing it could end a call as a
	// tool error where the gateway says it timed out.
	api := &restAPI{u: u, doc: doc, base: base, cfg: c, creds: creds, limit: int64(o.MaxResponseBytes), client: &http.Client{
		Transport:     u.g.tracing.transport(http.DefaultTransport),
		CheckRedirect: openapi.CheckRedirect,
	}}
	if c.OAuth != nil && !hasAuthorization(c) {
		if api.token, err = newRESTToken(u, c, doc); err != nil {
			return nil, err
		}
	}
	for i := range tools {
		t := &tools[i]
		srv.AddTool(&t.Tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return api.call(ctx, t, req.Params.Arguments)
		})
	}
	u.logger.Info("gateway: OpenAPI description mapped", "tools", len(tools), "skipped", len(skipped), "base", base.Redacted())
	return srv, nil
}

// openAPIBase is where calls go: the configured baseUrl, else the
// description's first server, which must then be absolute.
func openAPIBase(configured string, servers []string) (*url.URL, error) {
	raw, from := configured, "baseUrl"
	if raw == "" {
		if len(servers) == 0 {
			return nil, errors.New("the OpenAPI description names no server: set openapi.baseUrl")
		}
		raw, from = servers[0], "the description's first server"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s is not an absolute http(s) URL: set openapi.baseUrl", from)
	}
	return u, nil
}

// restAPI makes the calls of one REST API upstream.
type restAPI struct {
	u      *upstream
	doc    *openapi.Document
	base   *url.URL
	cfg    *config.Server
	creds  openapi.Credentials
	token  *restToken // nil without oauth
	limit  int64
	client *http.Client // the base URL's origin only (openapi.CheckRedirect)
}

// call builds the operation's request from the arguments (checked
// against its schema first), sends it with the upstream's credentials
// to the base URL only, and makes the result from the answer. What the
// API answers, an error status included, is a result (isError for an
// error status); 429 and a Retry-After hold the upstream's calls back
// as an MCP server's would, and 5xx answers and failed connections count
// against its circuit breaker.
func (a *restAPI) call(ctx context.Context, t *openapi.Tool, raw json.RawMessage) (*mcp.CallToolResult, error) {
	args := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return toolError("the arguments are not a JSON object: " + err.Error()), nil
		}
	}
	// A refused token is dropped and the call made once more with a new
	// one: the API may have revoked it before its expiry.
	for attempt := 0; ; attempt++ {
		req, err := t.BuildRequest(ctx, a.base, args)
		if err != nil {
			var ae *openapi.ArgumentError
			if errors.As(err, &ae) {
				return toolError(err.Error()), nil
			}
			return nil, err
		}
		token, err := a.authorize(ctx, t, req)
		if err != nil {
			return nil, err
		}
		resp, err := a.client.Do(req)
		if err != nil {
			a.u.breaker.record(false)
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // its URL may hold a key sent in the query
			}
			return nil, fmt.Errorf("%s %s: %s", t.Method, t.Path, redact.String(err.Error()))
		}
		if resp.StatusCode == http.StatusUnauthorized && token != "" {
			a.token.refused(token)
			if attempt == 0 {
				resp.Body.Close()
				continue
			}
		}
		return a.result(ctx, t, req, resp)
	}
}

// authorize sets the upstream's credentials on req, after it is built so
// that no argument can set them: the values for the description's
// security schemes, the configured headers, then Authorization from
// bearerToken or the OAuth token. It returns the OAuth token it set.
//
// The OAuth token is the value of the description's oauth2 and
// openIdConnect schemes, so that it goes only with the operations that
// ask for one of them; a description that declares none gets it on
// every call, as bearerToken would.
func (a *restAPI) authorize(ctx context.Context, t *openapi.Tool, req *http.Request) (string, error) {
	creds, tok := a.creds, ""
	if a.token != nil {
		have := append(slices.Collect(maps.Keys(a.creds)), a.token.schemes...)
		use := a.doc.SchemesFor(t, have)
		if len(a.token.schemes) == 0 || slices.ContainsFunc(use, func(n string) bool { return slices.Contains(a.token.schemes, n) }) {
			var err error
			if tok, err = a.token.get(ctx); err != nil {
				return "", err
			}
			creds = maps.Clone(a.creds)
			if creds == nil {
				creds = openapi.Credentials{}
			}
			for _, n := range a.token.schemes {
				creds[n] = tok
			}
		}
	}
	if _, err := a.doc.Authorize(t, req, creds); err != nil {
		return "", err
	}
	for k, v := range a.cfg.Headers {
		req.Header.Set(k, v)
	}
	if a.cfg.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+a.cfg.BearerToken)
	}
	if tok != "" && len(a.token.schemes) == 0 {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return tok, nil
}

// result makes the call's result from the API's answer.
func (a *restAPI) result(ctx context.Context, t *openapi.Tool, req *http.Request, resp *http.Response) (*mcp.CallToolResult, error) {
	a.u.breaker.record(resp.StatusCode < 500)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		a.u.noteRateLimit(ctx, &mcphttp.HTTPError{Status: resp.StatusCode, Header: resp.Header, Method: req.Method})
	}
	res, err := openapi.ResultFromResponse(resp, a.limit)
	if err != nil {
		return toolError(fmt.Sprintf("%s %s: %v", t.Method, t.Path, err)), nil
	}
	return res, nil
}

func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// openAPIWait bounds loading a description at connect, apart from the
// call timeout: a remote one may be large.
const openAPIWait = 2 * time.Minute

// hasAuthorization reports whether c sends an Authorization of its own
// (a tenant's header or bearerToken), which the OAuth token then leaves
// alone: Authorization is one credential whichever way it is given.
func hasAuthorization(c *config.Server) bool {
	if c.BearerToken != "" {
		return true
	}
	for k := range c.Headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}
