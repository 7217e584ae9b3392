package mcphttp

import "net/http"

// CheckHost returns next behind the Handler's Host and Origin checks: a
// request from a host or origin the Options do not allow gets 403 before
// next sees it. Put it outside authentication, so that a request under a
// foreign name (DNS rebinding) is refused as such rather than asked for
// credentials, and authentication never runs for it. The Handler checks
// again itself; the checks are cheap.
func (h *Handler) CheckHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.checkOrigin(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}
