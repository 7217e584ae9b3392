// Package conformance is mcpgate's side of the official MCP conformance
// suite (@modelcontextprotocol/conformance), built on the public mcp,
// mcphttp and oauthclient APIs as any user's program would be.
//
//   - [NewServer] is the fixtures server: every tool, resource and prompt
//     the suite's server scenarios call. "mcpgate conformance-server"
//     serves it over HTTP for the suite to test.
//   - [RunClient] is the client side: the suite starts a test server per
//     scenario, and "mcpgate conformance-client" calls RunClient with its
//     URL, the scenario's name and, for some authorization scenarios,
//     credentials ([ClientContext]). The client does what an ordinary
//     application would; the suite scores the traffic it sees.
//
// "make conformance" (scripts/conformance.sh) runs both modes against
// the suite pinned in conformance/suite, and against the newer line
// pinned in conformance/suite-next for the 2026-07-28 revision; each
// run's results are written under conformance/results.
package conformance
