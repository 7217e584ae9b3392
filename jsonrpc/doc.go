// Package jsonrpc implements the JSON-RPC 2.0 message layer that MCP is built
// on: decoding and validating messages, encoding replies, and framing
// messages as newline-delimited lines. It knows nothing about MCP.
//
// # Messages
//
// [DecodeMessage] decodes and validates one message into a [Message],
// whose [Message.Kind] says whether it is a request, a notification or a
// response. A message that breaks the rules is refused with a
// [*DecodeError] that says how to answer it: with which [Error] and [ID],
// or not at all (a malformed notification or response gets no answer).
// [IsBatch] and [SplitBatch] handle the batches of the 2025-03-26
// revision.
//
// Request ids are kept as the exact JSON text the peer sent, so that a reply
// carries back the same bytes: "1" stays a string, 1 stays a number, and a
// 2^64+1 integer or a string with an escaped lone surrogate is echoed
// unchanged. [IntID] and [StringID] make ids for requests of one's own.
//
// # Replies and errors
//
// [AppendResult], [AppendError], [AppendRequest] and [AppendNotification]
// encode messages onto a byte slice, around a result or params already
// encoded (with [Marshal], which writes nil slices and maps as [] and {}
// and refuses invalid UTF-8). An [*Error] is also a Go error: a handler
// returns one, made with [Errorf] and a code such as
// [CodeInvalidParams], to choose the code the peer sees; [AsError] turns
// any other error into an internal error.
//
// # Framing
//
// Over stdio, each message is one line. A [LineReader] reads lines up to a
// size limit ([DefaultMaxMessageSize] unless told otherwise); a longer line
// is skipped and reported as a [*TooLargeError], whose ends often still
// hold the id to answer ([PeekID], [PeekTrailingID]), and reading goes on.
// A [LineWriter] writes each message whole from any number of goroutines,
// and flushes a burst of them in one system call.
package jsonrpc
