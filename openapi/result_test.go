package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// answer is a response the test server gives.
type answer struct {
	status      int
	contentType string
	header      map[string]string
	body        string
	chunked     bool // no Content-Length
}

func answering(t *testing.T, a answer) *http.Response {
	t.Helper()
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no sniffing: none means none
		if a.contentType != "" {
			w.Header().Set("Content-Type", a.contentType)
		}
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		if a.chunked {
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, a.body)
	}))
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("image %s %q", c.MIMEType, c.Data))
		default:
			parts = append(parts, fmt.Sprintf("%T", c))
		}
	}
	return strings.Join(parts, "\n")
}

func TestResultsCarryTheAnswer(t *testing.T) {
	tests := []struct {
		name       string
		answer     answer
		isError    bool
		text       string
		structured any
	}{
		{"a JSON object", answer{status: 200, contentType: "application/json", body: `{"id":1,"name":"a"}`},
			false, `{"id":1,"name":"a"}`, map[string]any{"id": 1.0, "name": "a"}},
		{"a JSON array, wrapped", answer{status: 200, contentType: "application/vnd.api+json", body: `[1,2]`},
			false, `[1,2]`, map[string]any{"result": []any{1.0, 2.0}}},
		{"JSON without a Content-Type", answer{status: 201, body: `"done"`},
			false, `"done"`, map[string]any{"result": "done"}},
		{"text", answer{status: 200, contentType: "text/plain; charset=utf-8", body: "plain words"}, false, "plain words", nil},
		{"no content", answer{status: 204}, false, "HTTP 204 No Content (no content)", nil},
		{"an image", answer{status: 200, contentType: "image/png", body: "\x89PNG"}, false, `image image/png "\x89PNG"`, nil},
		{"binary", answer{status: 200, contentType: "application/pdf", body: "\xff\xfe\x00"}, false, "HTTP 200 OK: 3 bytes of application/pdf, which is not text", nil},
		{"message", answer{status: 404, contentType: "application/json", body: `{"message":"Not Found","documentation_url":"x"}`}, true, "HTTP 404 Not Found: Not Found", nil},
		{"error.message", answer{status: 400, contentType: "application/json", body: `{"error":{"code":3,"message":"bad field"}}`}, true, "HTTP 400 Bad Request: bad field", nil},
		{"error and error_description", answer{status: 401, contentType: "application/json", body: `{"error":"invalid_token","error_description":"expired"}`}, true, "HTTP 401 Unauthorized: invalid_token: expired", nil},
		{"errors[0].message", answer{status: 422, contentType: "application/json", body: `{"errors":[{"message":"name is taken"},{"message":"x"}]}`}, true, "HTTP 422 Unprocessable Entity: name is taken", nil},
		{"a problem", answer{status: 409, contentType: "application/problem+json", body: `{"type":"about:blank","title":"Conflict","detail":"version 3 is older"}`}, true, "HTTP 409 Conflict: Conflict: version 3 is older", nil},
		{"Retry-After", answer{status: 429, contentType: "application/json", header: map[string]string{"Retry-After": "30"}, body: `{"message":"slow down"}`}, true, "HTTP 429 Too Many Requests: slow down\nRetry-After: 30", nil},
		{"an HTML error page", answer{status: 503, contentType: "text/html", body: "<h1>down</h1>"}, true, "HTTP 503 Service Unavailable: <h1>down</h1>", nil},
		{"a redirect not followed", answer{status: 302, header: map[string]string{"Location": "https://elsewhere.invalid/"}}, true, "HTTP 302 Found\n(a redirect to https://elsewhere.invalid/, not followed)", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ResultFromResponse(answering(t, tt.answer), 0)
			if err != nil {
				t.Fatal(err)
			}
			if r.IsError != tt.isError || resultText(r) != tt.text {
				t.Errorf("isError %v, text %q; want %v, %q", r.IsError, resultText(r), tt.isError, tt.text)
			}
			if tt.structured == nil && r.StructuredContent != nil || tt.structured != nil && !reflect.DeepEqual(r.StructuredContent, tt.structured) {
				t.Errorf("structured %#v, want %#v", r.StructuredContent, tt.structured)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("the result does not encode: %v", err)
			}
		})
	}
}

func TestResultsAreBoundedInSize(t *testing.T) {
	big := strings.Repeat("x", 1000)
	for _, chunked := range []bool{false, true} {
		resp := answering(t, answer{status: 200, contentType: "text/plain", body: big, chunked: chunked})
		_, err := ResultFromResponse(resp, 999)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "limit of 999 bytes") {
			t.Errorf("chunked %v: got %v, want ErrTooLarge naming the limit", chunked, err)
		}
		resp = answering(t, answer{status: 200, contentType: "text/plain", body: big, chunked: chunked})
		if r, err := ResultFromResponse(resp, 1000); err != nil || resultText(r) != big {
			t.Errorf("chunked %v: a body at the limit: %v", chunked, err)
		}
	}
}

func TestRetryAfterReadsSecondsAndDates(t *testing.T) {
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{map[string]string{"Retry-After": "120"}, 2 * time.Minute, true},
		{map[string]string{"Retry-After": date.Add(90 * time.Second).Format(http.TimeFormat), "Date": date.Format(http.TimeFormat)}, 90 * time.Second, true},
		{map[string]string{"Retry-After": "-1"}, 0, false},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{}, 0, false},
	}
	for _, tt := range tests {
		resp := &http.Response{Header: http.Header{}}
		for k, v := range tt.header {
			resp.Header.Set(k, v)
		}
		if got, ok := RetryAfter(resp); got != tt.want || ok != tt.ok {
			t.Errorf("%v: got %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}
