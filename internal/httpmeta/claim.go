package httpmeta

import (
	"bytes"

	"github.com/mcpgate/mcpgate/internal/wire"
)

// MetaProtocolVersion is the _meta key naming a 2026-07-28 request's
// revision; package mcp exports the same text as mcp.MetaProtocolVersion.
const MetaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// PerRequestClaim reports whether params claim a protocol revision in
// _meta, which makes the message a 2026-07-28 one whatever its method. It
// looks for the key before decoding anything, so session-era traffic pays
// one byte search.
func PerRequestClaim(params []byte) bool {
	if len(params) == 0 || !bytes.Contains(params, []byte(MetaProtocolVersion)) {
		return false
	}
	meta := wire.Member(params, "_meta")
	return len(meta) > 0 && meta[0] == '{' && wire.Member(meta, MetaProtocolVersion) != nil
}
