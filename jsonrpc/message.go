package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Kind says what a message is.
type Kind uint8

const (
	KindRequest      Kind = iota + 1 // has a method and an id
	KindNotification                 // has a method and no id
	KindResponse                     // has a result or an error and no method
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "invalid"
}

// Message is one decoded JSON-RPC message. Params, Result and the raw id
// alias the bytes the message was decoded from.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage // nil when absent or null
	Result json.RawMessage // set on a success response
	Error  *Error          // set on an error response
}

// Kind reports whether m is a request, a notification or a response.
func (m *Message) Kind() Kind {
	switch {
	case m.Method == "" && (m.Result != nil || m.Error != nil):
		return KindResponse
	case m.ID.IsZero():
		return KindNotification
	default:
		return KindRequest
	}
}

// DecodeError is why [DecodeMessage] rejected a message, and how to
// answer it.
type DecodeError struct {
	Err *Error
	// ID is the id to answer with; the zero ID is sent as null. It is
	// always zero for a parse error: text that is not JSON has no id.
	ID ID
	// Reply is false when the message looked like a notification or a
	// response: those are never answered, not even with an error.
	Reply bool
}

func (e *DecodeError) Error() string { return e.Err.Message }

var decoders = sync.Pool{New: func() any { return new(msgDecoder) }}

type msgDecoder struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

// release drops the reference to the last message, so a pooled decoder
// does not keep a large message alive.
func (md *msgDecoder) release() {
	md.buf = bytes.Buffer{}
	md.dec.Reset(&md.buf)
	decoders.Put(md)
}

// DecodeMessage decodes and validates one JSON-RPC message (not a batch).
// On failure the error is a *[DecodeError] saying how to answer; get it
// with [errors.As].
func DecodeMessage(data []byte) (*Message, error) {
	// Small enough to be inlined, so that a caller that keeps the message
	// to itself has it on its stack.
	m := new(Message)
	if de := m.decode(data); de != nil {
		return nil, de
	}
	return m, nil
}

// decode fills the zero message m from data.
func (m *Message) decode(data []byte) *DecodeError {
	if !utf8.Valid(data) {
		return &DecodeError{Err: &Error{Code: CodeParseError, Message: "Parse error: the message is not valid UTF-8; send JSON text encoded as UTF-8"}, Reply: true}
	}
	md := decoders.Get().(*msgDecoder)
	defer md.release()
	// A bytes.Buffer lets the decoder parse in place: values it returns are
	// then slices of data, found again below by their offsets.
	md.buf = *bytes.NewBuffer(data)
	md.dec.Reset(&md.buf, jsontext.AllowInvalidUTF8(true))
	d := &md.dec

	var (
		idRaw, method, params, jv    []byte
		hasID, hasMethod, hasJSONRPC bool
		result, errv                 []byte
	)
	value := func() ([]byte, error) {
		v, err := d.ReadValue()
		if err != nil {
			return nil, err
		}
		end := int(d.InputOffset())
		return data[end-len(v) : end : end], nil
	}
	syntax := func(err error) *DecodeError {
		// Text that is not JSON has no id, whatever an id-like member
		// read before the fault says: JSON-RPC 2.0 (section 5) answers a
		// parse error with a null id. Echoing a salvaged one would tie
		// the error to a request the peer may still be sending whole.
		return &DecodeError{Err: &Error{Code: CodeParseError, Message: "Parse error: " + describeSyntaxError(err, data)}, Reply: true}
	}

	switch k := d.PeekKind(); k {
	case '{':
	case 0:
		if _, err := d.ReadToken(); err != nil {
			return syntax(err)
		}
		return syntax(io.ErrUnexpectedEOF)
	default:
		if _, err := value(); err != nil {
			return syntax(err)
		}
		if err := expectEOF(d); err != nil {
			return syntax(err)
		}
		return &DecodeError{Err: &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: a JSON-RPC message must be a JSON object, not %s", kindName(k))}, Reply: true}
	}
	if _, err := d.ReadToken(); err != nil {
		return syntax(err)
	}
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return syntax(err)
		}
		// Member names we care about never contain escapes, so compare
		// the raw text; an escaped spelling is treated as unknown.
		var field *[]byte
		switch string(name) {
		case `"jsonrpc"`:
			field, hasJSONRPC = &jv, true
		case `"id"`:
			field, hasID = &idRaw, true
		case `"method"`:
			field, hasMethod = &method, true
		case `"params"`:
			field = &params
		case `"result"`:
			field = &result
		case `"error"`:
			field = &errv
		}
		v, err := value()
		if err != nil {
			return syntax(err)
		}
		if field != nil {
			*field = v
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return syntax(err)
	}
	if err := expectEOF(d); err != nil {
		return syntax(err)
	}

	isResponse := !hasMethod && (result != nil || errv != nil)
	// A notification (a string method and no id) and a response are
	// never answered, not even when malformed: the sender expects no
	// answer, and an error sent back for a response could echo between
	// two peers. Everything else is a request, or nothing JSON-RPC knows
	// ({} or {"id":1}, say), and is answered.
	isNotification := !hasID && hasMethod && method[0] == '"'
	invalid := func(format string, args ...any) *DecodeError {
		de := &DecodeError{Err: &Error{Code: CodeInvalidRequest, Message: "Invalid Request: " + fmt.Sprintf(format, args...)}}
		de.Reply = !isResponse && !isNotification
		if hasID {
			if id, e := parseID(idRaw); e == nil {
				de.ID = id
			}
		}
		return de
	}

	if !hasMethod && !isResponse {
		return invalid(`the object has no "method", as a request or notification must, and no "result" or "error", as a response must`)
	}
	if !hasJSONRPC {
		return invalid(`the "jsonrpc" member is missing; it must be "2.0"`)
	}
	if string(jv) != `"2.0"` {
		return invalid(`"jsonrpc" must be "2.0", not %s`, truncate(string(jv), 40))
	}
	if hasID {
		id, e := parseID(idRaw)
		if e != nil {
			// A response with a null id answers a message of ours that the
			// peer could not read; it is valid JSON-RPC and handled as such.
			if !(isResponse && idRaw[0] == 'n') {
				de := &DecodeError{Err: &Error{Code: CodeInvalidRequest, Message: "Invalid Request: " + e.Message}, Reply: !isResponse}
				return de
			}
		} else {
			m.ID = id
		}
	}
	if isResponse {
		if result != nil && errv != nil {
			return invalid(`a response must not have both "result" and "error"`)
		}
		if !hasID {
			return invalid(`a response must have an "id"`)
		}
		if result != nil {
			m.Result = result
			return nil
		}
		e, derr := decodeErrorObject(errv)
		if derr != "" {
			return invalid("%s", derr)
		}
		m.Error = e
		return nil
	}
	if method[0] != '"' {
		return invalid(`"method" must be a string, not %s`, kindName(jsontext.Kind(method[0])))
	}
	if m.Method = methodName(method); m.Method == "" && len(method) > 2 {
		// data is valid UTF-8: a name without escapes is its own text.
		if bytes.IndexByte(method, '\\') < 0 {
			m.Method = string(method[1 : len(method)-1])
		} else {
			var err error
			if m.Method, err = unquote(method); err != nil {
				return invalid(`"method" is not a valid string`)
			}
		}
	}
	if result != nil || errv != nil {
		return invalid(`a request or notification must not have "result" or "error"`)
	}
	if params != nil {
		switch params[0] {
		case '{':
			m.Params = params
		case 'n': // null params are read as absent, as most peers do
		default:
			return invalid(`"params" must be an object, not %s`, kindName(jsontext.Kind(params[0])))
		}
	}
	return nil
}

// methodName returns the method names of MCP as constants, sparing a
// string per message; "" for any other (or escaped) name.
func methodName(quoted []byte) string {
	if len(quoted) < 2 {
		return ""
	}
	switch string(quoted[1 : len(quoted)-1]) {
	case "ping":
		return "ping"
	case "initialize":
		return "initialize"
	case "tools/call":
		return "tools/call"
	case "tools/list":
		return "tools/list"
	case "notifications/initialized":
		return "notifications/initialized"
	case "notifications/cancelled":
		return "notifications/cancelled"
	case "notifications/progress":
		return "notifications/progress"
	case "notifications/message":
		return "notifications/message"
	case "resources/list":
		return "resources/list"
	case "resources/read":
		return "resources/read"
	case "resources/templates/list":
		return "resources/templates/list"
	case "resources/subscribe":
		return "resources/subscribe"
	case "resources/unsubscribe":
		return "resources/unsubscribe"
	case "prompts/list":
		return "prompts/list"
	case "prompts/get":
		return "prompts/get"
	case "completion/complete":
		return "completion/complete"
	case "logging/setLevel":
		return "logging/setLevel"
	case "server/discover":
		return "server/discover"
	case "subscriptions/listen":
		return "subscriptions/listen"
	case "tasks/get":
		return "tasks/get"
	case "tasks/result":
		return "tasks/result"
	case "tasks/list":
		return "tasks/list"
	case "tasks/cancel":
		return "tasks/cancel"
	case "tasks/update":
		return "tasks/update"
	case "sampling/createMessage":
		return "sampling/createMessage"
	case "elicitation/create":
		return "elicitation/create"
	case "roots/list":
		return "roots/list"
	case "notifications/roots/list_changed":
		return "notifications/roots/list_changed"
	case "notifications/tools/list_changed":
		return "notifications/tools/list_changed"
	case "notifications/prompts/list_changed":
		return "notifications/prompts/list_changed"
	case "notifications/resources/list_changed":
		return "notifications/resources/list_changed"
	case "notifications/resources/updated":
		return "notifications/resources/updated"
	case "notifications/tasks/status":
		return "notifications/tasks/status"
	}
	return ""
}

func expectEOF(d *jsontext.Decoder) error {
	if _, err := d.ReadToken(); err != io.EOF {
		if err == nil {
			return errors.New("unexpected data after the top-level value")
		}
		return err
	}
	return nil
}

func decodeErrorObject(raw []byte) (*Error, string) {
	if raw[0] != '{' {
		return nil, `"error" must be an object`
	}
	var e Error
	if err := unmarshal(raw, &e); err != nil {
		return nil, `"error" must have an integer "code" and a string "message"`
	}
	return &e, ""
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "nothing"
}

// describeSyntaxError turns a jsontext error into one sentence that names
// the byte offset of the fault.
func describeSyntaxError(err error, data []byte) string {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		msg := se.Err.Error()
		if errors.Is(se.Err, io.ErrUnexpectedEOF) {
			msg = "the JSON text ends early (truncated message?)"
		}
		return fmt.Sprintf("invalid JSON at byte %d: %s", se.ByteOffset, msg)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		if len(trimSpace(data)) == 0 {
			return "the message is empty"
		}
		return "the JSON text ends early (truncated message?)"
	}
	return "invalid JSON: " + err.Error()
}
