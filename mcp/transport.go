package mcp

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
