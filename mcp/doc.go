// Package mcp implements the Model Context Protocol: its types, a server
// engine with sessions, lifecycle and dispatch, and the stdio transport.
//
// A server is a set of registered tools, resources and prompts:
//
//	s := mcp.NewServer(&mcp.Implementation{Name: "demo", Version: "1.0.0"}, nil)
//	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Say hello"}, greet)
//	err := s.ServeStdio(ctx, nil)
//
// Each client connection is a ServerSession. The engine negotiates the
// protocol revision per session (2024-11-05 to 2025-11-25) and shapes every
// result for that revision, so one server serves old and new clients alike.
// Transports carry whole messages through the small Conn and MessageWriter
// interfaces; middleware of one shape (func(MethodHandler) MethodHandler)
// wraps every method.
package mcp
