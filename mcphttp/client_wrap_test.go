package mcphttp

import (
	"net/http"
	"sync"
	"testing"
)

// markingTransport stamps each request it sends, so that the server can
// tell which requests went through the wrapper.
type markingTransport struct{ next http.RoundTripper }

func (m markingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Wrapped", "yes")
	return m.next.RoundTrip(r)
}

// WrapTransport sees every POST of a session and wraps the transport the
// client would have used anyway: the default one with its connect
// bounds, or the caller's own, which is left unchanged.
func TestClientWrapTransportSeesEachPostAndKeepsTheBounds(t *testing.T) {
	own := &http.Transport{}
	tests := []struct {
		name      string
		client    *http.Client
		wantInner http.RoundTripper
	}{
		{"default client", nil, defaultHTTPClient().Transport},
		{"caller's client", &http.Client{Transport: own}, own},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv, rec := startRecorded(t, testServer(), nil)
			var mu sync.Mutex
			var inners []http.RoundTripper
			tr := &ClientTransport{HTTPClient: tt.client, WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
				mu.Lock()
				inners = append(inners, rt)
				mu.Unlock()
				return markingTransport{rt}
			}}
			cs := connectClient(t, srv.URL+"/mcp", tr, nil)
			callText(t, cs, "echo", map[string]any{"text": "x"})

			posts := 0
			for _, r := range rec.all() {
				if r.method != http.MethodPost {
					continue
				}
				posts++
				if r.header.Get("X-Wrapped") != "yes" {
					t.Errorf("a POST did not go through the wrapper: %s", r.body)
				}
			}
			if posts < 3 { // initialize, notifications/initialized, tools/call
				t.Errorf("%d POSTs, want at least 3", posts)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(inners) != 1 || inners[0] != tt.wantInner {
				t.Fatalf("wrapped %v, want once around %v", inners, tt.wantInner)
			}
			if dt, ok := inners[0].(*http.Transport); ok && tt.client == nil && (dt.DialContext == nil || dt.TLSHandshakeTimeout == 0) {
				t.Errorf("the default transport lost its connect bounds")
			}
			if tt.client != nil && tt.client.Transport != own {
				t.Errorf("the caller's client was changed")
			}
		})
	}
}
