package mcp

import (
	"context"
	"errors"
)

// MessageWriter carries messages to the client: a stdio pipe, an HTTP
// response stream. WriteMessage writes msg whole or not at all, is safe for
// concurrent use, and does not keep msg after it returns.
type MessageWriter interface {
	WriteMessage(msg []byte) error
}

// Conn is a bidirectional stream of whole messages, such as the stdin and
// stdout of a process. ReadMessage returns a slice the caller owns; for a
// message over the size limit it returns a *jsonrpc.TooLargeError (or,
// when the Conn knows which request the message answered, a
// *MessageTooLargeError with its ID) and the stream goes on.
type Conn interface {
	MessageWriter
	ReadMessage() ([]byte, error)
	Close() error
}

// MessageWriterFunc adapts a function to MessageWriter.
type MessageWriterFunc func(msg []byte) error

func (f MessageWriterFunc) WriteMessage(msg []byte) error { return f(msg) }

// Transport opens a connection to a server: a subprocess's pipes
// (CommandTransport), an HTTP endpoint (package mcphttp), or a Conn the
// caller already has (ConnTransport).
type Transport interface {
	Connect(ctx context.Context) (Conn, error)
}

// ConnTransport is a Transport over a Conn that is already open, such as
// one end of a pipe to an in-process server.
type ConnTransport struct{ Conn Conn }

// Connect returns t.Conn.
func (t ConnTransport) Connect(context.Context) (Conn, error) { return t.Conn, nil }

// ContextWriter is implemented by a Conn whose writes can be cancelled,
// such as an HTTP POST. The client uses it when present.
type ContextWriter interface {
	WriteMessageContext(ctx context.Context, msg []byte) error
}

// ProtocolVersionSetter is implemented by a Conn that must know the
// negotiated revision, such as HTTP, which sends it in a header. The
// client calls it once initialize has succeeded.
type ProtocolVersionSetter interface {
	SetProtocolVersion(version string)
}

// ErrSessionNotFound is returned (wrapped) by a Conn whose server no
// longer knows the session, such as an HTTP 404. The client then starts a
// fresh session on the same Conn with initialize and retries the call
// once; a Conn that returns it must be ready for that initialize.
var ErrSessionNotFound = errors.New("mcp: the server does not know this session")

// ServerKeyer is implemented by a Transport that can name the server it
// reaches (an HTTP endpoint, a command line), so that a Client remembers
// the server's protocol era between connections.
type ServerKeyer interface {
	ServerKey() string
}

// sizeSetter is implemented by a Conn that can name the option raising
// its message size limit, for the errors of oversized answers.
type sizeSetter interface{ sizeSetting() string }
