package mcphttp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// fake is a small Streamable HTTP server for the cases our own server
// never produces: it initializes like a real one (session "fake-1") and
// hands each tools/call to onCall, and each GET to onGET (405 when nil).
type fake struct {
	srv    *httptest.Server
	rec    *recorder
	onCall func(w http.ResponseWriter, r *http.Request, id, tool string)
	onGET  http.HandlerFunc
	// onPOST, when set, answers every POST instead.
	onPOST http.HandlerFunc
	// onDELETE, when set, answers DELETE instead of 200.
	onDELETE http.HandlerFunc
	// noSession leaves out Mcp-Session-Id, as a stateless server does.
	noSession bool
}

func newFake(t testing.TB) *fake {
	f := &fake{rec: &recorder{}}
	f.srv = httptest.NewServer(f.rec.wrap(http.HandlerFunc(f.serve)))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) url() string { return f.srv.URL + "/mcp" }

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		if f.onDELETE != nil {
			f.onDELETE(w, r)
		}
		return
	case http.MethodGet:
		if f.onGET != nil {
			f.onGET(w, r)
			return
		}
		http.Error(w, "no GET stream here", http.StatusMethodNotAllowed)
		return
	}
	if f.onPOST != nil {
		f.onPOST(w, r)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &m)
	switch {
	case m.Method == "initialize":
		if !f.noSession {
			w.Header().Set(headerSessionID, "fake-1")
		}
		writeJSON(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`)
	case m.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "tools/call" && f.onCall != nil:
		f.onCall(w, r, string(m.ID), m.Params.Name)
	default:
		writeJSON(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{}}`)
	}
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body)
}

// sseStart opens an event stream and flushes its headers.
func sseStart(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

func sseWrite(w http.ResponseWriter, s string) {
	io.WriteString(w, s)
	w.(http.Flusher).Flush()
}

// textResult is a tools/call result with one text block.
func textResult(id, text string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
}
