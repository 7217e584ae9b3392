package httpmeta

import (
	"context"
	"testing"
)

func TestPerRequestClaim(t *testing.T) {
	const v = `"io.modelcontextprotocol/protocolVersion"`
	tests := []struct {
		name   string
		params string
		want   bool
	}{
		{"no params", ``, false},
		{"session-era params", `{"name":"echo","arguments":{}}`, false},
		{"claim in _meta", `{"name":"echo","_meta":{` + v + `:"2026-07-28"}}`, true},
		{"a claim that is not a string still claims", `{"_meta":{` + v + `:5}}`, true},
		{"key in the arguments is no claim", `{"arguments":{` + v + `:"2026-07-28"}}`, false},
		{"key deeper in _meta is no claim", `{"_meta":{"x":{` + v + `:"2026-07-28"}}}`, false},
		{"_meta that is not an object", `{"_meta":"` + `io.modelcontextprotocol/protocolVersion` + `"}`, false},
		{"escaped _meta name", `{"\u005fmeta":{` + v + `:"2026-07-28"}}`, true},
		{"the first of repeated _meta counts", `{"_meta":{},"_meta":{` + v + `:"2026-07-28"}}`, false},
		{"text after the claim is not read", `{"_meta":{` + v + `:"2026-07-28"},"x":}`, true},
		{"invalid UTF-8 elsewhere", "{\"name\":\"\xff\",\"_meta\":{" + v + ":\"2026-07-28\"}}", true},
		{"broken before the claim", `{"name":,"_meta":{` + v + `:"2026-07-28"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PerRequestClaim([]byte(tt.params)); got != tt.want {
				t.Errorf("PerRequestClaim(%s) = %v, want %v", tt.params, got, tt.want)
			}
		})
	}
}

func TestHeaderValuesRoundTrip(t *testing.T) {
	tests := []struct {
		name, value, encoded string
	}{
		{"visible ASCII as it is", "echo", "echo"},
		{"empty as it is", "", ""},
		{"non-ASCII in Base64", "naïve", "=?base64?bmHDr3Zl?="},
		{"leading space in Base64", " x", "=?base64?IHg=?="},
		{"control character in Base64", "a\tb", "=?base64?YQli?="},
		{"the marker itself in Base64", "=?base64?x", "=?base64?PT9iYXNlNjQ/eA==?="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := EncodeValue(tt.value)
			if enc != tt.encoded {
				t.Errorf("EncodeValue(%q) = %q, want %q", tt.value, enc, tt.encoded)
			}
			if got, ok := DecodeValue(enc); !ok || got != tt.value {
				t.Errorf("DecodeValue(%q) = %q, %v; want %q", enc, got, ok, tt.value)
			}
		})
	}
}

func TestDecodeValueRefusesMalformed(t *testing.T) {
	for _, v := range []string{
		"=?base64?!!!!?=", // not Base64
		"=?base64?YQ?=",   // missing padding (strict)
		"=?base64?/w==?=", // Base64 of invalid UTF-8
		"naïve",           // non-ASCII literal
		"a\tb",            // control character
	} {
		if got, ok := DecodeValue(v); ok {
			t.Errorf("DecodeValue(%q) = %q, accepted", v, got)
		}
	}
}

func TestCallHeaders(t *testing.T) {
	if h := CallHeaders(context.Background()); h != nil {
		t.Errorf("CallHeaders of a bare context = %v, want nil", h)
	}
	want := map[string]string{"Mcp-Param-Region": "eu"}
	if h := CallHeaders(WithCallHeaders(context.Background(), want)); h["Mcp-Param-Region"] != "eu" || len(h) != 1 {
		t.Errorf("CallHeaders = %v, want %v", h, want)
	}
}
