// Package jsonrpc implements the JSON-RPC 2.0 message layer that MCP is built
// on: decoding and validating messages, encoding replies, and framing
// messages as newline-delimited lines. It knows nothing about MCP.
//
// Request ids are kept as the exact JSON text the peer sent, so that a reply
// carries back the same bytes: "1" stays a string, 1 stays a number, and a
// 2^64+1 integer or a string with an escaped lone surrogate is echoed
// unchanged.
package jsonrpc
