package httpmeta

import (
	"context"
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// EncodeValue encodes a value for an MCP header (Mcp-Name, Mcp-Param-*):
// as it is when it is visible ASCII without spaces at either end, else as
// =?base64?{Base64 of its UTF-8}?=.
func EncodeValue(v string) string {
	plain := v == strings.TrimSpace(v) && !strings.HasPrefix(v, "=?base64?")
	for i := 0; plain && i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			plain = false
		}
	}
	if plain {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// DecodeValue undoes [EncodeValue], strictly: bad padding or characters
// are refused, and a value without both markers is literal, which must
// be visible ASCII.
func DecodeValue(v string) (string, bool) {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len("=?base64?") : len(v)-2])
		if err != nil || !utf8.Valid(b) {
			return "", false
		}
		return string(b), true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return "", false
		}
	}
	return v, true
}

// ParamHeader is an x-mcp-header annotation of a tool's input schema: the
// argument at Path travels also as the HTTP header Mcp-Param-{Name}.
type ParamHeader struct {
	Name string
	Path []string
	Type string // string, integer or boolean
}

type callHeadersKey struct{}

// WithCallHeaders returns ctx carrying the headers a client call asks its
// transport to send (Mcp-Param-* for tools with x-mcp-header).
func WithCallHeaders(ctx context.Context, h map[string]string) context.Context {
	return context.WithValue(ctx, callHeadersKey{}, h)
}

// CallHeaders returns the headers set by [WithCallHeaders]; transports
// that have no headers ignore them.
func CallHeaders(ctx context.Context) map[string]string {
	h, _ := ctx.Value(callHeadersKey{}).(map[string]string)
	return h
}
