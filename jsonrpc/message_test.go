package jsonrpc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDecodeMessageValid(t *testing.T) {
	big := strings.Repeat("x", 100<<10)
	tests := []struct {
		name, in string
		kind     Kind
		id       string // raw id text expected
		method   string
		params   string
	}{
		{"request int id", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, KindRequest, `1`, "ping", ""},
		{"request string id", `{"jsonrpc":"2.0","id":"1","method":"ping"}`, KindRequest, `"1"`, "ping", ""},
		{"negative id", `{"jsonrpc":"2.0","id":-7,"method":"ping"}`, KindRequest, `-7`, "ping", ""},
		{"huge integer id", `{"jsonrpc":"2.0","id":18446744073709551617,"method":"ping"}`, KindRequest, `18446744073709551617`, "ping", ""},
		{"lone surrogate id", `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, KindRequest, `"\ud800"`, "ping", ""},
		{"escaped id kept as sent", `{"jsonrpc":"2.0","id":"\u0061\/b","method":"ping"}`, KindRequest, `"\u0061\/b"`, "ping", ""},
		{"100 kB id", `{"jsonrpc":"2.0","id":"` + big + `","method":"ping"}`, KindRequest, `"` + big + `"`, "ping", ""},
		{"params object", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`, KindRequest, `2`, "tools/call", `{"name":"x"}`},
		{"null params read as absent", `{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`, KindRequest, `2`, "ping", ""},
		{"member order and whitespace", " {\"method\" : \"ping\",\n\"id\":3 , \"jsonrpc\":\"2.0\"}\r", KindRequest, `3`, "ping", ""},
		{"unknown members ignored", `{"jsonrpc":"2.0","id":3,"method":"ping","extra":[1,2]}`, KindRequest, `3`, "ping", ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, KindNotification, ``, "notifications/initialized", ""},
		{"result", `{"jsonrpc":"2.0","id":5,"result":{}}`, KindResponse, `5`, "", ""},
		{"error", `{"jsonrpc":"2.0","id":"5","error":{"code":-1,"message":"no"}}`, KindResponse, `"5"`, "", ""},
		{"error with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`, KindResponse, ``, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Stored as callers store it: a typed nil *DecodeError in an
			// error would read as a failure here.
			var m *Message
			var err error
			m, err = DecodeMessage([]byte(tt.in))
			if err != nil {
				t.Fatalf("DecodeMessage: %v", err)
			}
			if got := m.Kind(); got != tt.kind {
				t.Errorf("kind = %v, want %v", got, tt.kind)
			}
			if got := string(m.ID.raw); got != tt.id {
				t.Errorf("id = %.60s, want %.60s", got, tt.id)
			}
			if m.Method != tt.method {
				t.Errorf("method = %q, want %q", m.Method, tt.method)
			}
			if string(m.Params) != tt.params {
				t.Errorf("params = %s, want %s", m.Params, tt.params)
			}
			// Documented: nil when absent or null, so callers can test
			// m.Params == nil.
			if tt.params == "" && m.Params != nil {
				t.Errorf("params = %q, want nil", m.Params)
			}
		})
	}
}

func TestDecodeMessageInvalid(t *testing.T) {
	tests := []struct {
		name, in string
		code     int64
		reply    bool
		id       string // raw id of the reply, "" for null
		msg      string // a fragment of the error message
	}{
		{"not JSON", `{"jsonrpc":"2.0",`, CodeParseError, true, "", "ends early"},
		{"garbage", `hello`, CodeParseError, true, "", "invalid JSON at byte 0"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}", CodeParseError, true, "", "UTF-8"},
		{"trailing data has a null id", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, CodeParseError, true, "", "after the top-level value"},
		{"syntax error after an id has a null id", `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"a":}}`, CodeParseError, true, "", "invalid JSON"},
		{"truncated after an id has a null id", `{"jsonrpc":"2.0","id":7,"method":`, CodeParseError, true, "", "ends early"},
		{"duplicate member has a null id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, CodeParseError, true, "", "duplicate"},
		{"array of numbers is a batch, not here", `[1]`, CodeInvalidRequest, true, "", "must be a JSON object, not an array"},
		{"string message", `"ping"`, CodeInvalidRequest, true, "", "not a string"},
		{"number message", `42`, CodeInvalidRequest, true, "", "not a number"},
		{"missing jsonrpc", `{"id":1,"method":"ping"}`, CodeInvalidRequest, true, "1", `"jsonrpc" member is missing`},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest, true, "1", `must be "2.0"`},
		{"numeric jsonrpc", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, CodeInvalidRequest, true, "1", `must be "2.0"`},
		{"missing method", `{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, true, "1", "method"},
		{"empty object is answered", `{}`, CodeInvalidRequest, true, "", `no "method"`},
		{"jsonrpc alone is answered", `{"jsonrpc":"2.0"}`, CodeInvalidRequest, true, "", `no "method"`},
		{"id alone is answered with it", `{"id":1}`, CodeInvalidRequest, true, "1", `no "method"`},
		{"unknown members alone are answered", `{"jsonrpc":"2.0","params":{}}`, CodeInvalidRequest, true, "", `no "result" or "error"`},
		{"bad id alone is answered with null", `{"jsonrpc":"2.0","id":[1]}`, CodeInvalidRequest, true, "", `no "method"`},
		{"method not string without id is answered", `{"jsonrpc":"2.0","method":1,"params":"bar"}`, CodeInvalidRequest, true, "", "must be a string"},
		{"method not string", `{"jsonrpc":"2.0","id":1,"method":5}`, CodeInvalidRequest, true, "1", "must be a string"},
		{"params array", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, CodeInvalidRequest, true, "1", "must be an object"},
		{"params string", `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, CodeInvalidRequest, true, "1", "must be an object"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, true, "", "not null"},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest, true, "", "fractional"},
		{"float-looking integer id", `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, CodeInvalidRequest, true, "", "fractional"},
		{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, CodeInvalidRequest, true, "", "exponent"},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, true, "", "boolean"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest, true, "", "object"},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, CodeInvalidRequest, true, "", "array"},
		{"request with result", `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, CodeInvalidRequest, true, "1", "result"},
		{"bad notification is not answered", `{"jsonrpc":"1.0","method":"notifications/x"}`, CodeInvalidRequest, false, "", "2.0"},
		{"notification with array params is not answered", `{"jsonrpc":"2.0","method":"n","params":[]}`, CodeInvalidRequest, false, "", "object"},
		{"response with both is not answered", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, CodeInvalidRequest, false, "1", "both"},
		{"response without id is not answered", `{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, false, "", "id"},
		{"response with bad error is not answered", `{"jsonrpc":"2.0","id":1,"error":"x"}`, CodeInvalidRequest, false, "1", "object"},
		{"empty", ``, CodeParseError, true, "", "empty"},
		{"deep nesting", strings.Repeat("[", 20000) + strings.Repeat("]", 20000), CodeParseError, true, "", "depth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := DecodeMessage([]byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeMessage accepted it: %+v", m)
			}
			if m != nil {
				t.Errorf("DecodeMessage returned a message and an error")
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			if de.Err.Code != tt.code {
				t.Errorf("code = %d, want %d (%s)", de.Err.Code, tt.code, de.Err.Message)
			}
			if de.Reply != tt.reply {
				t.Errorf("reply = %v, want %v", de.Reply, tt.reply)
			}
			if got := de.ID.raw; got != tt.id {
				t.Errorf("reply id = %q, want %q", got, tt.id)
			}
			if !strings.Contains(de.Err.Message, tt.msg) {
				t.Errorf("message %q does not mention %q", de.Err.Message, tt.msg)
			}
		})
	}
}

func TestEncodeEchoesIDBytes(t *testing.T) {
	for _, raw := range []string{`1`, `"1"`, `18446744073709551617`, `"\ud800"`, `"\u0061"`, `-0`} {
		m, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":` + raw + `,"method":"ping"}`))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		got := string(AppendResult(nil, m.ID, []byte(`{}`)))
		want := `{"jsonrpc":"2.0","id":` + raw + `,"result":{}}`
		if got != want {
			t.Errorf("reply = %s, want %s", got, want)
		}
	}
}

func TestAppendError(t *testing.T) {
	e := Errorf(CodeInvalidParams, "bad \"x\"\xff").WithData(map[string]any{"uri": "a"})
	got := string(AppendError(nil, ID{}, e))
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"bad \"x\"` + "\ufffd" + `","data":{"uri":"a"}}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := string(AppendNotification(nil, "notifications/progress", []byte(`{"a":1}`))); got != `{"jsonrpc":"2.0","method":"notifications/progress","params":{"a":1}}` {
		t.Errorf("notification = %s", got)
	}
	if got := string(AppendRequest(nil, IntID(3), "ping", nil)); got != `{"jsonrpc":"2.0","id":3,"method":"ping"}` {
		t.Errorf("request = %s", got)
	}
}

func TestSplitBatch(t *testing.T) {
	// Stored as callers store it: a typed nil *Error in an error would
	// read as a failure here.
	var elems [][]byte
	var err error
	elems, err = SplitBatch([]byte(` [ {"a":1}, 2 ,"x"] `))
	if err != nil {
		t.Fatal(err)
	}
	if len(elems) != 3 || string(elems[0]) != `{"a":1}` || string(elems[1]) != `2` || string(elems[2]) != `"x"` {
		t.Errorf("elems = %q", elems)
	}
	var e *Error
	if _, err := SplitBatch([]byte(`[]`)); !errors.As(err, &e) || e.Code != CodeInvalidRequest {
		t.Errorf("empty batch: %v", err)
	}
	if _, err := SplitBatch([]byte(`[{"a":1},`)); !errors.As(err, &e) || e.Code != CodeParseError {
		t.Errorf("truncated batch: %v", err)
	}
	if !IsBatch([]byte(" \n[")) || IsBatch([]byte(`{"a":[]}`)) {
		t.Error("IsBatch")
	}
}

func TestIDUnmarshal(t *testing.T) {
	var id ID
	if err := id.UnmarshalJSON([]byte(` "x" `)); err != nil || id.String() != `"x"` {
		t.Errorf("got %v %v", id, err)
	}
	if err := id.UnmarshalJSON([]byte(`1.5`)); err == nil {
		t.Error("fractional id accepted")
	}
	if n, ok := IntID(42).Int64(); !ok || n != 42 {
		t.Error("Int64")
	}
	if StringID(`a"b`).String() != `"a\"b"` {
		t.Error("StringID quoting")
	}
}

func TestPeekID(t *testing.T) {
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":"abc","method":"x","params":{"a":"xxxx`: `"abc"`,
		`{"jsonrpc":"2.0","method":"x","params":{"a":[1,2]},"id":7,"x`: `7`,
		`{"jsonrpc":"2.0","method":"x","params":{"a":"xxxxxxxx`:        ``,
		`[1,2]`:          ``,
		`{"id":{"a":1}}`: ``,
	} {
		if got := PeekID([]byte(in)).raw; got != want {
			t.Errorf("PeekID(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestPeekTrailingID(t *testing.T) {
	for in, want := range map[string]string{
		`xxxx"}]},"jsonrpc":"2.0","id":12}`:        `12`,
		`xxxx"}]},"jsonrpc":"2.0","id" : "a\"b" }`: `"a\"b"`,
		`xx","id":3,"jsonrpc":"2.0"}`:              `3`,
		`"text":"the \"id\":9 trick"}]},"id":4}`:   `4`,
		`"text":"no id here"}]}}`:                  ``,
		`"id":{"a":1}}`:                            ``,
		`"id":1.5}`:                                ``,
		`"id":null}`:                               ``,
		`"id":7 "x"`:                               ``,
	} {
		if got := PeekTrailingID([]byte(in)).raw; got != want {
			t.Errorf("PeekTrailingID(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestTooLargeSuffix(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	in := `{"result":{"content":[{"type":"text","text":"` + big + `"}]},"jsonrpc":"2.0","id":42}` + "\n" + `{"jsonrpc":"2.0","id":43,"result":{}}` + "\n"
	lr := NewLineReader(strings.NewReader(in), 1024)
	_, err := lr.Read()
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("got %v, want TooLargeError", err)
	}
	if got := PeekTrailingID(tl.Suffix).String(); got != "42" {
		t.Errorf("trailing id %q, want 42 (suffix %q)", got, tl.Suffix)
	}
	if line, err := lr.Read(); err != nil || !strings.Contains(string(line), `"id":43`) {
		t.Errorf("next line: %q, %v", line, err)
	}
}

func TestErrorDataIsACopyOfTheInput(t *testing.T) {
	// Readers reuse their line buffers: an error's data must outlive the
	// bytes it was decoded from.
	in := []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no","data":{"why":"x"}}}`)
	m, err := DecodeMessage(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = ' '
	}
	if got := string(m.Error.Data); got != `{"why":"x"}` {
		t.Errorf("data after the input was overwritten = %q, want {\"why\":\"x\"}", got)
	}
}

func TestErrorMarshalsTheSameWithEitherEncoder(t *testing.T) {
	tests := []struct {
		name string
		e    *Error
		want string
	}{
		{"no data: member omitted", &Error{Code: -1, Message: "no"}, `{"code":-1,"message":"no"}`},
		{"object data", Errorf(-1, "no").WithData(map[string]int{"a": 1}), `{"code":-1,"message":"no","data":{"a":1}}`},
		{"null data kept", &Error{Code: -1, Message: "no", Data: json.RawMessage("null")}, `{"code":-1,"message":"no","data":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v2, err := Marshal(tt.e)
			if err != nil {
				t.Fatal(err)
			}
			v1, err := json.Marshal(tt.e)
			if err != nil {
				t.Fatal(err)
			}
			if string(v2) != tt.want || string(v1) != tt.want {
				t.Errorf("Marshal = %s, encoding/json = %s, want %s", v2, v1, tt.want)
			}
		})
	}
}
