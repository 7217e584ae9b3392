package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate/gateway/pins"
	"github.com/mcpgate/mcpgate/internal/redact"
)

// AdminAuth returns middleware that admits only requests carrying token
// as a bearer token (Authorization: Bearer TOKEN); others get 401 with a
// Bearer challenge. The token is compared in constant time and never
// logged. An empty token admits nobody: what it guards stays closed until
// a token is configured. It guards the ops listener's details and the
// admin API.
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

// The admin API of the tool-definition pins, on the ops listener behind
// AdminAuth (see OpsHandler):
//
//	GET  /admin/pins[?server=S]              the pins, as mcpgate pins list
//	GET  /admin/pins/diff?server=S&tool=T    what a pending definition changes
//	POST /admin/pins/approve?server=S[&tool=T[&hash=H]]
//	POST /admin/pins/reset?server=S[&tool=T]
//
// Answers are JSON; errors are {"error": "..."} with 400 (a missing
// parameter), 404 (no such pin) or 500.
func (g *Gateway) pinsAdmin() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/pins", func(w http.ResponseWriter, r *http.Request) {
		ps, err := g.pins.List(r.Context(), r.URL.Query().Get("server"))
		if err != nil {
			adminError(w, err)
			return
		}
		out := make([]pins.Report, 0, len(ps))
		for _, p := range ps {
			out = append(out, p.Report())
		}
		adminJSON(w, map[string]any{"pins": out})
	})
	mux.HandleFunc("GET /admin/pins/diff", func(w http.ResponseWriter, r *http.Request) {
		server, tool := r.URL.Query().Get("server"), r.URL.Query().Get("tool")
		if server == "" || tool == "" {
			adminError(w, errBadRequest("name the pin: ?server=S&tool=T"))
			return
		}
		p, err := g.pins.Get(r.Context(), server, tool)
		if err != nil {
			adminError(w, err)
			return
		}
		diff, err := p.Diff()
		if err != nil {
			adminError(w, err)
			return
		}
		adminJSON(w, map[string]any{"pin": p.Report(), "diff": diff})
	})
	mux.HandleFunc("POST /admin/pins/approve", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("server") == "" {
			adminError(w, errBadRequest("name the server: ?server=S (and &tool=T for one tool)"))
			return
		}
		as, err := g.ApprovePins(r.Context(), q.Get("server"), q.Get("tool"), q.Get("hash"), "admin API")
		if err != nil {
			adminError(w, err)
			return
		}
		adminJSON(w, map[string]any{"approvals": as})
	})
	mux.HandleFunc("POST /admin/pins/reset", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("server") == "" {
			adminError(w, errBadRequest("name the server: ?server=S (and &tool=T for one tool)"))
			return
		}
		n, err := g.ResetPins(r.Context(), q.Get("server"), q.Get("tool"), "admin API")
		if err != nil {
			adminError(w, err)
			return
		}
		adminJSON(w, map[string]any{"reset": n})
	})
	return mux
}

type errBadRequest string

func (e errBadRequest) Error() string { return string(e) }

func adminJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}

func adminError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var bad errBadRequest
	switch {
	case errors.As(err, &bad):
		status = http.StatusBadRequest
	case errors.Is(err, pins.ErrNotFound):
		status = http.StatusNotFound
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": redact.String(err.Error())})
}
