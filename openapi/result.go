package openapi

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/mcp"
)

// DefaultResponseLimit is the size limit of a response body, in bytes,
// for a limit of zero or less.
const DefaultResponseLimit = 10 << 20

// maxErrorText bounds the part of an error response's body that is shown.
const maxErrorText = 2000

// ResultFromResponse makes the result of a call from the API's response,
// reading at most limit bytes of its body (DefaultResponseLimit for zero
// or less) and closing it. A larger body is an error that wraps
// [ErrTooLarge].
//
// A 2xx JSON answer becomes structured content, the object itself or any
// other value as {"result": value}, as the output schema from [Tools]
// says, with the JSON as text beside it. Images and audio become image and
// audio content; text becomes text. Any other status is an isError result
// whose text has the status, the API's message (from the common shapes of
// error bodies: message, error, error.message, errors[0].message, and a
// problem's title and detail) or else the start of the body, and the
// Retry-After when there is one.
func ResultFromResponse(resp *http.Response, limit int64) (*mcp.CallToolResult, error) {
	defer resp.Body.Close()
	if limit <= 0 {
		limit = DefaultResponseLimit
	}
	if resp.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("openapi: reading the response: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, tooLarge(limit)
	}
	if resp.StatusCode/100 != 2 {
		return errorResult(resp, body), nil
	}
	return successResult(resp, body), nil
}

func tooLarge(limit int64) error {
	return fmt.Errorf("openapi: the response body is %w of %d bytes", ErrTooLarge, limit)
}

func successResult(resp *http.Response, body []byte) *mcp.CallToolResult {
	if len(body) == 0 {
		return textResult(fmt.Sprintf("HTTP %s (no content)", resp.Status), false)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if isJSON(mt) || mt == "" && json.Valid(body) {
		var v any
		if err := json.Unmarshal(body, &v); err == nil {
			structured, ok := v.(map[string]any)
			if !ok {
				structured = map[string]any{"result": v}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, StructuredContent: structured}
		}
	}
	switch {
	case strings.HasPrefix(mt, "image/"):
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: body, MIMEType: mt}}}
	case strings.HasPrefix(mt, "audio/"):
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: body, MIMEType: mt}}}
	case utf8.Valid(body):
		return textResult(string(body), false)
	}
	return textResult(fmt.Sprintf("HTTP %s: %d bytes of %s, which is not text", resp.Status, len(body), mt), false)
}

func isJSON(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func textResult(s string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}, IsError: isError}
}

func errorResult(resp *http.Response, body []byte) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %s", resp.Status)
	if msg := apiMessage(body); msg != "" {
		b.WriteString(": " + msg)
	} else if s := strings.TrimSpace(strings.ToValidUTF8(string(body), "\uFFFD")); s != "" {
		b.WriteString(": " + truncate(s, maxErrorText))
	}
	if resp.StatusCode/100 == 3 {
		if loc := resp.Header.Get("Location"); loc != "" {
			fmt.Fprintf(&b, "\n(a redirect to %s, not followed)", truncate(loc, 500))
		}
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		fmt.Fprintf(&b, "\nRetry-After: %s", truncate(ra, 100))
	}
	return textResult(b.String(), true)
}

// apiMessage finds the message in a JSON error body.
func apiMessage(body []byte) string {
	var v map[string]any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	str := func(x any) string {
		s, _ := x.(string)
		return strings.TrimSpace(s)
	}
	msg := str(v["message"])
	if msg == "" {
		switch e := v["error"].(type) {
		case string:
			msg = strings.TrimSpace(e)
			if d := str(v["error_description"]); d != "" {
				msg += ": " + d
			}
		case map[string]any:
			msg = str(e["message"])
		}
	}
	if errs, ok := v["errors"].([]any); msg == "" && ok && len(errs) > 0 {
		switch e := errs[0].(type) {
		case string:
			msg = strings.TrimSpace(e)
		case map[string]any:
			msg = str(e["message"])
		}
	}
	if msg == "" {
		title, detail := str(v["title"]), str(v["detail"])
		switch {
		case title != "" && detail != "":
			msg = title + ": " + detail
		default:
			msg = title + detail
		}
	}
	return truncate(msg, maxErrorText)
}

// RetryAfter reads a response's Retry-After, in seconds or as a date
// (then from the response's Date, or from now without one), for the
// caller's limiter and circuit breaker on a 429 or 503.
func RetryAfter(resp *http.Response) (time.Duration, bool) {
	ra := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if ra == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(ra, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, int64(365*24*time.Hour/time.Second))) * time.Second, true
	}
	at, err := http.ParseTime(ra)
	if err != nil {
		return 0, false
	}
	now := time.Now()
	if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		now = d
	}
	return max(at.Sub(now), 0), true
}
