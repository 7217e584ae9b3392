package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"
)

// AdminAuth returns middleware that admits only requests carrying token
// as a bearer token (Authorization: Bearer TOKEN); others get 401 with a
// Bearer challenge. The token is compared in constant time and never
// logged. An empty token admits nobody: what it guards stays closed until
// a token is configured. It guards the ops listener's details today, and
// is meant for any later admin endpoint.
func AdminAuth(token string) func(http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			// Hashing first makes the comparison's time independent of
			// the token's length too.
			sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
			if token != "" && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare(sum[:], want[:]) == 1 {
				next.ServeHTTP(w, r)
				return
			}
			msg := "Unauthorized: send the admin token as \"Authorization: Bearer TOKEN\""
			if token == "" {
				msg = "Unauthorized: no admin token is configured, so this is closed (mcpgate serve --admin-token-file)"
			}
			if r.Header.Get("Authorization") != "" {
				slog.Info("gateway: admin request refused", "path", r.URL.Path, "remote", r.RemoteAddr)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgate-admin"`)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(msg + "\n"))
		})
	}
}
