// Package wire holds mcpgate's fast paths beside the real JSON codecs
// (go-json-experiment/json and santhosh-tekuri/jsonschema): the one
// place where a message may be read or written without them. Each fast
// path takes only what it is sure of and says ok; on false the caller
// uses the real codec, which then rules and words any error. So a fast
// path can make a call cheaper but never change what is accepted or what
// is sent, and its tests hold it to the real codec.
//
// A fast path is kept here only while a benchmark on a realistic
// workload shows it is worth its code; its doc comment names the
// benchmark and the figure. Those measured and removed (the JSON-RPC
// envelope, tools/call params, typed arguments, tools/call results read
// by a client, member lookups in _meta) cost too little to keep; the
// commits that removed them give their figures.
package wire
