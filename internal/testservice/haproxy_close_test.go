package testservice

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A client that closes a streamed response (a 2026-07-28 client
// cancelling its call) ends the backend's request too, while the backend
// is writing nothing: otherwise the handler runs on until its next write.
func TestHAProxyPassesAClientsCloseToTheBackend(t *testing.T) {
	ended := make(chan struct{})
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(": open\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(ended)
		case <-time.After(waitForTest):
		}
	}))
	t.Cleanup(be.Close)
	h := HAProxy(t, []string{be.URL}, nil)

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-ended:
	case <-time.After(waitForTest): // a bound on a hang
		t.Fatal("the backend's request went on after the client closed its response")
	}
}
