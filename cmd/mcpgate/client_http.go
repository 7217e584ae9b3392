package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// httpHeaders builds the headers of --header and --api-key.
func (f *clientFlags) httpHeaders() (http.Header, error) {
	h := http.Header{}
	for _, hv := range f.headers {
		name, value, err := parseHeader(hv)
		if err != nil {
			return nil, err
		}
		h.Add(name, value)
	}
	if f.apiKey != "" {
		if h.Get("Authorization") != "" {
			return nil, errors.New("both --api-key (or MCPGATE_API_KEY) and an Authorization --header are set; use one")
		}
		h.Set("Authorization", "Bearer "+f.apiKey)
	}
	return h, nil
}

// httpTransport returns the transport to endpoint and a function that
// releases what it holds.
func (f *clientFlags) httpTransport(endpoint string) (mcp.Transport, func(), error) {
	h, err := f.httpHeaders()
	if err != nil {
		return nil, nil, err
	}
	if u, err := url.Parse(endpoint); err == nil && u.Scheme == "http" && (h.Get("Authorization") != "" || f.oauth) && !loopbackHost(u.Hostname()) {
		slog.Warn("sending credentials over plain http: anyone on the network path can read them; use https", "url", endpoint)
	}
	tr := &mcphttp.ClientTransport{Endpoint: endpoint, Header: h, Logger: slog.Default()}
	release := func() {}
	if f.oauth {
		if tr.HTTPClient, release, err = oauthHTTPClient(endpoint); err != nil {
			return nil, nil, err
		}
	}
	if tracerProvider() != nil {
		// The W3C headers beside params._meta, for servers that read
		// only those, on the transport's own client and its bounds.
		tr.WrapTransport = roundTripTracing
	}
	return tr, release, nil
}

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// explainHTTP explains the failures of a URL target, or returns nil.
func explainHTTP(err error, u string, f *clientFlags) error {
	if e := explainNet(err, u); e != nil {
		return e
	}
	if e := explainOAuth(err, u); e != nil {
		return e
	}
	var he *mcphttp.HTTPError
	if !errors.As(err, &he) {
		return nil
	}
	status := fmt.Sprintf("HTTP %d %s", he.Status, http.StatusText(he.Status))
	detail := serverDetail(he)
	switch he.Status {
	case http.StatusUnauthorized:
		if h, _ := f.httpHeaders(); h.Get("Authorization") != "" || f.oauth {
			return fmt.Errorf("%s refused the credentials (%s)%s: check --api-key, MCPGATE_API_KEY or the Authorization --header", u, status, detail)
		}
		how := "pass an API key with --api-key KEY (or MCPGATE_API_KEY), or credentials with --header 'Authorization: ...'"
		if oauthAvailable {
			how += ", or sign in with --oauth"
		}
		if strings.Contains(strings.ToLower(he.Header.Get("WWW-Authenticate")), "resource_metadata") && oauthAvailable {
			how += " (the server says it accepts OAuth)"
		}
		return fmt.Errorf("%s requires authentication (%s): %s", u, status, how)
	case http.StatusForbidden:
		return fmt.Errorf("%s refused access (%s)%s: the credentials lack a permission (scope) it needs, or it does not allow this host", u, status, detail)
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return fmt.Errorf("%s is not an MCP endpoint (%s)%s: check the URL's path (mcpgate serves /mcp)", u, status, detail)
	}
	return fmt.Errorf("%s: %s", u, stripMCP(he.Error()))
}

// serverDetail is the server's own words about an HTTP error, if any: the
// message of a JSON-RPC error body, or the start of a text body.
func serverDetail(he *mcphttp.HTTPError) string {
	body := strings.TrimSpace(he.Body)
	if body == "" || strings.HasPrefix(he.Header.Get("Content-Type"), "text/html") {
		return ""
	}
	var m struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &m) == nil && m.Error != nil {
		body = m.Error.Message
	}
	// "Unauthorized: ..." repeats the status.
	if st, rest, ok := strings.Cut(body, ": "); ok && strings.EqualFold(st, http.StatusText(he.Status)) {
		body = rest
	}
	if body = oneLine(body); body == "" {
		return ""
	}
	return ": " + truncate(body, 200)
}
