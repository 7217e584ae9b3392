// Package openapi turns a REST API described by OpenAPI into MCP tools:
// [Load] a description, map its operations with [Tools], and for each
// call build the HTTP request with [Tool.BuildRequest] and make the tool
// result from the answer with [ResultFromResponse]. Sending the request,
// with the credentials, the timeout and the client's [CheckRedirect], is
// the caller's part.
//
// # Loading
//
// [Load] reads OpenAPI 3.0 or 3.1, or Swagger 2.0 which it converts to
// OpenAPI 3, in JSON or YAML, from a file, an http(s) URL or bytes
// ([LoadOptions].Data). Every document it reads, the description and
// those its $refs name, goes through its own reader: bounded in size
// (MaxBytes), time (FetchTimeout) and number (MaxDocuments); files only
// under the description's own directory, through [os.Root]; remote
// documents only with AllowRemoteRefs; redirects only within an origin.
// A malformed or hostile description is an error, never a panic or a
// hang.
//
// The parser is github.com/getkin/kin-openapi. Beside
// github.com/pb33f/libopenapi, the other well-kept Go parser, it converts
// Swagger 2.0 to OpenAPI 3, so that one mapping serves both; its loader
// takes a context and a reader of ours for every $ref; and it resolves
// each $ref into the schema it names, so that a recursive schema is a
// cycle of pointers to follow. libopenapi parsed faster (GitHub's
// description in 0.6 s against 1.3 s, the APIs.guru collection in 31 s
// against 79 s, with half the memory) but needs a second mapping for
// Swagger 2.0 and builds its schemas lazily. Both loaded the 2,640
// descriptions of APIs.guru without a panic. The parser's types stay
// inside this package. kin reads JSON with its YAML parser, slowly for a
// large description; an OpenAPI 3 description in JSON is read here by
// jsontext into the node tree kin decodes from (GitHub's in 0.5 s), and
// gives the same document.
//
// # Tools
//
// [Tools] makes one [Tool] per operation, in the order of the paths and
// then of the methods, and reports each operation it cannot map as
// [Skipped], with a [SkipReason]. [MapOptions] filters operations by
// globs on operationId, tool name or tag.
//
// A tool's name is the operationId, its other characters replaced by '_'
// to meet MCP's rules (1 to 128 of A-Z, a-z, 0-9, '_', '-', '.'), or the
// method and path when there is none: GET /repos/{owner}/{repo} is
// get_repos_owner_repo. Names are settled in three passes: operationIds
// valid as written, then sanitised ones, then names from method and path;
// within a pass in the tools' order. A name already taken gets the first
// free suffix of _2, _3 and so on; one over 128 characters is cut and
// ends with a hash of the whole. Names are given before the filters
// apply, so a filter never renames a tool.
//
// The title is the summary; the description is the summary and the
// description, trimmed to [MapOptions].MaxDescription bytes. Annotations
// follow the method's semantics (RFC 9110): GET, HEAD, OPTIONS and TRACE
// are read-only; PUT and DELETE idempotent and destructive; POST and
// PATCH keep MCP's defaults, destructive and not idempotent. Every tool is
// open-world.
//
// # Input schemas
//
// A tool's input schema is one JSON Schema 2020-12 object whose properties
// are the path, query, header and cookie parameters and the request body.
// A body that is an object of plain properties has them merged, its
// readOnly ones left out; any other body (an array, a oneOf, a text) is
// the "body" property. A name shared by two inputs becomes
// <location>_<name> on each, the locations being path, query, header,
// cookie and body ("path_id" and "query_id"); a name still taken gets _2.
// Path parameters are required; the others as the description says, the
// body's properties only when the body is required. Unknown arguments are
// refused. The header parameters Accept, Content-Type and Authorization
// are ignored, as the specification says, and so are those that frame or
// route a request (Host, Content-Length, Cookie and the like).
//
// Schemas keep their keywords, allOf, oneOf and anyOf included, in their
// 2020-12 form: nullable becomes a type with "null" (or anyOf with
// {"type": "null"} beside an allOf), 3.0's boolean exclusive bounds
// become numbers, an example becomes examples. A schema a $ref names is
// an entry of $defs, so recursion is a $ref and never an expansion;
// inline schemas nest at most 64 deep. A pattern Go cannot compile accepts
// any string: the API still checks it.
//
// # Output schemas
//
// The output schema is that of the first 2xx response with a JSON body.
// MCP wants an object there: an object schema is used as it is; any other
// (an array, a string, an object that may be null) is wrapped as
// {"result": schema}, as [ResultFromResponse] wraps the value. A response
// schema that cannot be converted leaves the tool without an output
// schema; [MapOptions].NoOutputSchema leaves them all out.
//
// # Requests
//
// [Tool.BuildRequest] checks the arguments against the input schema,
// naming each bad one in an [ArgumentError], then serialises them by
// their style and explode: path simple, label and matrix; query form,
// spaceDelimited, pipeDelimited and deepObject; header simple; cookie
// form. Bodies are sent as JSON, application/x-www-form-urlencoded (each
// property by its Encoding Object), multipart/form-data (a binary property
// as a file, an object as JSON) or text.
//
// The URL is always the base URL joined with the operation's path
// template. Each value is escaped on its own, so that no argument can
// change the scheme, host or port, leave the base path, or add a path
// segment or a query parameter: "../admin" is the one segment
// "..%2Fadmin". allowReserved leaves reserved characters unescaped in a
// query value, except '&', '=', '+', '#' and ';'. A path value may not be
// empty, ".", or "..".
//
// # Results
//
// [ResultFromResponse] reads a bounded body and makes the result: a 2xx
// JSON answer as structured content and text; other statuses as an
// isError result with the status, the API's own message and Retry-After.
// [RetryAfter] reads that header for a limiter or circuit breaker.
package openapi
