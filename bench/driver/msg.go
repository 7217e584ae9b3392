package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Requests are numbered per connection or phase. Request k has the id k
// as a JSON number when k is even and as a JSON string of its digits when
// k is odd, so that a server which turns "7" into 7 (or back) is caught;
// its echo text is unique, textSize bytes, and says k.

const (
	textSize           = 100
	perRequestVersion  = "2026-07-28"
	legacyVersion      = "2025-11-25"
	perRequestMetaJSON = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + perRequestVersion + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpgate-bench","version":"1"}}`
)

// Older versions tried in turn when a server refuses the newest.
var legacyFallback = []string{legacyVersion, "2025-06-18", "2025-03-26", "2024-11-05"}

func appendID(b []byte, k int) []byte {
	if k%2 == 0 {
		return strconv.AppendInt(b, int64(k), 10)
	}
	b = append(b, '"')
	b = strconv.AppendInt(b, int64(k), 10)
	return append(b, '"')
}

var textPad = strings.Repeat("x", textSize)

func appendText(b []byte, k int) []byte {
	n := len(b)
	b = append(b, "echo-"...)
	b = strconv.AppendInt(b, int64(k), 10)
	b = append(b, '-')
	return append(b, textPad[:textSize-(len(b)-n)]...)
}

// appendEcho appends a tools/call of tool with the text of request k in
// argument arg; per-request adds the 2026-07-28 _meta.
func appendEcho(b []byte, k int, tool, arg string, perRequest bool) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendID(b, k)
	b = append(b, `,"method":"tools/call","params":{"name":"`...)
	b = append(b, tool...)
	b = append(b, `","arguments":{"`...)
	b = append(b, arg...)
	b = append(b, `":"`...)
	b = appendText(b, k)
	b = append(b, `"}`...)
	if perRequest {
		b = append(b, ',')
		b = append(b, perRequestMetaJSON...)
	}
	return append(b, "}}"...)
}

func appendRequest(b []byte, k int, method, params string) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendID(b, k)
	b = append(b, `,"method":"`...)
	b = append(b, method...)
	b = append(b, '"')
	if params != "" {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

func initializeParams(version string) string {
	return `{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"mcpgate-bench","version":"1"}}`
}

const initializedNote = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// wire is any JSON-RPC message from a server.
// decode is the driver's decoder for the servers' messages, on every
// reply of every server alike: go-json-experiment/json, as lenient as
// encoding/json (duplicate names and invalid UTF-8 pass; names match
// case-insensitively) and 2.4x faster on an echo reply (3.4 -> 1.4 µs,
// 20 -> 5 allocations), so that the driver's own CPU, which sets the pace
// of the pipelined phases, is less of a ceiling for fast servers.
func decode(data []byte, v any) error { return jsonv2.Unmarshal(data, v, decodeOpts) }

var decodeOpts = jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true), jsonv2.MatchCaseInsensitiveNames(true))

type wire struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (w *wire) isServerMessage() bool { return w.Method != "" }

func (w *wire) isServerRequest() bool {
	return w.Method != "" && len(w.ID) > 0 && string(w.ID) != "null"
}

// parseID reads a response id back into k: ok is false for an id this
// driver never sends, typeOK says the JSON type is the one request k had.
func parseID(raw []byte) (k int, typeOK, ok bool) {
	s := raw
	str := len(s) > 0 && s[0] == '"'
	if str {
		if len(s) < 3 || s[len(s)-1] != '"' {
			return 0, false, false
		}
		s = s[1 : len(s)-1]
	}
	n, err := strconv.Atoi(string(s))
	if err != nil || n < 0 {
		return 0, false, false
	}
	return n, str == (n%2 == 1), true
}

// checkID compares a response id with request k's: "" when it is the
// same, else the kind of error.
func checkID(raw []byte, k int) string {
	n, typeOK, ok := parseID(raw)
	switch {
	case !ok || n != k:
		return "id_mismatch"
	case !typeOK:
		return "id_type"
	}
	return ""
}

type echoResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// Ways to check an echo's text: exact (the text itself), contains
// (server-everything answers "Echo: TEXT"), none (the limit servers'
// canned answer).
const (
	checkExact    = "exact"
	checkContains = "contains"
	checkNone     = "none"
)

// checkEcho checks the answer to request k: "" when it is right, else the
// kind of error.
func checkEcho(w *wire, k int, check string, scratch []byte) string {
	if w.Error != nil {
		return "rpc_error"
	}
	if len(w.Result) == 0 {
		return "bad_result"
	}
	// The limit servers' canned answer is decoded and checked like an
	// echo, only its text is not compared: the driver must spend as much
	// on each answer of theirs as on a real server's, or the limit
	// measures a lighter driver (it did: 4.4 against 8.5 µs of driver CPU
	// a call with 64 in flight).
	var r echoResult
	if decode(w.Result, &r) != nil {
		return "bad_result"
	}
	if r.IsError {
		return "tool_error"
	}
	if len(r.Content) == 0 || r.Content[0].Type != "text" {
		return "bad_result"
	}
	if check == checkNone {
		return ""
	}
	want := appendText(scratch[:0], k)
	got := r.Content[0].Text
	if check == checkExact && got != string(want) || check == checkContains && !strings.Contains(got, string(want)) {
		return "bad_text"
	}
	return ""
}

// errorReply is what the driver answers a server's request with: it
// offers no client features.
func errorReply(id json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":{"code":-32601,"message":"Method not found: the benchmark client offers no client features"}}`)
	return b.Bytes()
}
