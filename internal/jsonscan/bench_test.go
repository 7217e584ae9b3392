package jsonscan

import (
	"strings"
	"testing"
)

func BenchmarkValid(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"}}}`},
		{"long-text", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"path":"/tmp/notes.md","content":"` + strings.Repeat("Some prose, with punctuation. ", 40) + `"}}}`},
	} {
		data := []byte(bc.text)
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if !Valid(data) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
