package mcphttp

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// origins decides which Host and Origin headers are accepted.
type origins struct {
	hosts   []string // lower-case names without port
	origins []string // lower-case scheme://host[:port]
	anyHost bool
	anyOrig bool
}

var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

func newOrigins(o *Options) *origins {
	c := &origins{hosts: slices.Clone(loopbackNames)}
	for _, h := range o.AllowedHosts {
		if h == "*" {
			c.anyHost = true
			continue
		}
		c.hosts = append(c.hosts, strings.ToLower(strings.Trim(h, "[]")))
	}
	for _, or := range o.AllowedOrigins {
		if or == "*" {
			c.anyOrig = true
			continue
		}
		c.origins = append(c.origins, strings.ToLower(strings.TrimSuffix(or, "/")))
	}
	return c
}

// hostAllowed checks the Host header: a rebinding attack reaches us under
// the attacker's name, so only names we know are served. Any port is
// fine, since the port does not change who the name points at.
func (c *origins) hostAllowed(host string) bool {
	if c.anyHost {
		return true
	}
	return slices.Contains(c.hosts, hostName(host))
}

// originAllowed checks the Origin header of browser requests.
func (c *origins) originAllowed(origin string) bool {
	if origin == "" || c.anyOrig {
		return true
	}
	o := strings.ToLower(origin)
	if slices.Contains(c.origins, o) {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false // includes "null", the origin of sandboxed pages
	}
	return slices.Contains(c.hosts, hostName(u.Host))
}

// hostName returns the lower-case name of a host[:port], without the
// brackets of an IPv6 literal.
func hostName(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.ToLower(strings.Trim(h, "[]"))
}

// checkOrigin rejects a request from a foreign Host or Origin with 403.
func (h *Handler) checkOrigin(w http.ResponseWriter, r *http.Request) bool {
	if !h.origins.hostAllowed(r.Host) {
		h.httpError(w, http.StatusForbidden, nil, codeInvalidRequest,
			"Forbidden: host %q is not allowed; add it to the server's allowed hosts (DNS-rebinding protection)", hostName(r.Host))
		return false
	}
	if origin := r.Header.Get("Origin"); !h.origins.originAllowed(origin) {
		h.httpError(w, http.StatusForbidden, nil, codeInvalidRequest,
			"Forbidden: origin %q is not allowed; add it to the server's allowed origins", origin)
		return false
	}
	return true
}

// cors adds CORS headers for an allowed browser origin and reports whether
// the request was a preflight, already answered.
func (h *Handler) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if !h.opts.CORS || origin == "" {
		return false
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", origin)
	hd.Add("Vary", "Origin")
	hd.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate")
	if r.Method != http.MethodOptions {
		return false
	}
	hd.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
	hd.Set("Access-Control-Allow-Headers", "Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID")
	hd.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
