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
	for _, unit := range []string{"sk-", "pwd=\"", "a://u:p/", "-----BEGIN ", "bearer ", "x=", "\"password\":{[", "a"} {
		for _, size := range []int{64 << 10, 1 << 20} {
			s := strings.Repeat(unit, size/len(unit))
			b.Run(fmt.Sprintf("%q/%dKiB", unit, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					redact.String(s)
				}
			})
		}
	}
}
