package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
)

// The error codes defined by JSON-RPC 2.0.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object. It implements error, so handlers can
// return one to choose the code the peer sees.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitzero"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithData returns a copy of e whose data member is v encoded as JSON.
// If v cannot be encoded, e is returned unchanged.
func (e *Error) WithData(v any) *Error {
	b, err := jsonv2.Marshal(v)
	if err != nil {
		return e
	}
	c := *e
	c.Data = b
	return &c
}

// AsError converts err to an *Error: an *Error found in err's chain is
// returned as it is; anything else becomes an internal error carrying
// err's text.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}
