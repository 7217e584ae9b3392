package redact_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/redact"
)

// toolCall is a typical tool call's arguments: a GitHub issue, 420
// bytes of JSON, nothing to hide.
//
// Measured on a shared 2-core AMD EPYC (Go 1.26, other builds running):
// String 2.1-2.3 µs and no allocation; Value 2.4-2.8 µs and no
// allocation; Value with two secrets 3.7-4.3 µs, 6 allocations; JSON
// 13-14 µs, most of it encoding/json's decode and encode, which the
// gateway's sanitizer paid already. The hostile inputs run at 40-1000
// MB/s, the same at 64 KiB and 1 MiB.
const toolCall = `{"owner":"mcpgate","repo":"mcpgate","title":"Gateway: redact secrets in the request log",` +
	`"body":"The request log shows the arguments of every tool call. Values under names the sanitizer ` +
	`does not know reach the log and the audit database; see https://github.com/mcpgate/mcpgate/issues/19 ` +
	`for the shapes, and the table test in internal/redact.","labels":["security","gateway"],` +
	`"assignees":["ann"],"milestone":3,"draft":false,"max_tokens":1024}`

// BenchmarkString is String over a typical argument's text.
func BenchmarkString(b *testing.B) {
	b.SetBytes(int64(len(toolCall)))
	for b.Loop() {
		redact.String(toolCall)
	}
}

// BenchmarkValue is Value over a typical call's decoded arguments.
func BenchmarkValue(b *testing.B) {
	var v any
	if err := json.Unmarshal([]byte(toolCall), &v); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(toolCall)))
	for b.Loop() {
		redact.Value(v)
	}
}

// BenchmarkValueWithSecrets is Value over arguments with two secrets.
func BenchmarkValueWithSecrets(b *testing.B) {
	var v any
	in := strings.Replace(toolCall, `"draft":false`, `"api_key":"k-1","cmd":"curl -H 'Authorization: Bearer t0k3n' https://h"`, 1)
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		redact.Value(v)
	}
}

// BenchmarkJSON is JSON over a typical call's raw arguments (a decode
// and an encode).
func BenchmarkJSON(b *testing.B) {
	b.SetBytes(int64(len(toolCall)))
	for b.Loop() {
		if _, err := redact.JSON([]byte(toolCall)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStringHostile is String over 1 MiB of each rule's worst
// case; its throughput matching the 64 KiB case's shows the time is
// linear.
func BenchmarkStringHostile(b *testing.B) {
	for _, tc := range []struct{ name, unit string }{
		{"formats", "sk-"},
		{"open-quotes", `pwd="`},
		{"urls", "a://u:p/"},
		{"urls-with-at", "a://u:p/" + strings.Repeat("x", 200) + "@"},
		{"pems", "-----BEGIN "},
		{"bearers", "bearer "},
		{"pairs", "x="},
		{"brackets", `"password":{[`},
		{"letters", "a"},
	} {
		for _, size := range []int{64 << 10, 1 << 20} {
			s := strings.Repeat(tc.unit, size/len(tc.unit))
			b.Run(fmt.Sprintf("%s/%dKiB", tc.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					redact.String(s)
				}
			})
		}
	}
}
