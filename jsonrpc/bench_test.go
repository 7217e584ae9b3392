package jsonrpc

import (
	"testing"
)

var (
	benchCall         = []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"text":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},"_meta":{"progressToken":"tok-1"}}}`)
	benchInitialize   = []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"claude-ai","title":"Claude","version":"0.1.0"}}}`)
	benchNotification = []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user stopped"}}`)
	benchResponse     = []byte(`{"jsonrpc":"2.0","id":3,"result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}`)
	// A realistic tools/call: a typed tool's five arguments and the
	// progress token clients send.
	benchDocsCall = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"list_documents","arguments":{"teamId":"TEAM-8f3a2c","limit":5,"includeArchived":false,"orderBy":"updatedAt","title":"roadmap"},"_meta":{"progressToken":42}}}`)
	benchResult   = []byte(`{"content":[{"type":"text","text":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}]}`)
)

func benchDecode(b *testing.B, msg []byte) {
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeMessage(msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeToolsCall(b *testing.B)    { benchDecode(b, benchCall) }
func BenchmarkDecodeDocsCall(b *testing.B)     { benchDecode(b, benchDocsCall) }
func BenchmarkDecodeInitialize(b *testing.B)   { benchDecode(b, benchInitialize) }
func BenchmarkDecodeNotification(b *testing.B) { benchDecode(b, benchNotification) }
func BenchmarkDecodeResponse(b *testing.B)     { benchDecode(b, benchResponse) }

func BenchmarkAppendResult(b *testing.B) {
	id := IntID(12345)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendResult(buf[:0], id, benchResult)
	}
}

func BenchmarkAppendError(b *testing.B) {
	e := Errorf(CodeInvalidParams, "Invalid params: unknown tool %q; call tools/list to see the available tools", "nope")
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendError(buf[:0], StringID("abc"), e)
	}
}
