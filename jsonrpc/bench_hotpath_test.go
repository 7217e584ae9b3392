package jsonrpc

import (
	"bytes"
	"io"
	"testing"
)

// Hot-path micro-benchmarks of the message layer, next to bench_test.go's:
// the smallest messages a server decodes most often, the stdio framing
// both ways, and the encoding of the commonest replies.

var (
	benchPing          = []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	benchSmallCall     = []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	benchSmallCallStr  = []byte(`{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	benchEmptyResult   = []byte(`{}`)
	benchSmallResult   = []byte(`{"content":[{"type":"text","text":"hello"}]}`)
	benchFramingStream = bytes.Repeat(append(append([]byte(nil), benchCall...), '\n'), 256)
)

func BenchmarkDecodePing(b *testing.B)                { benchDecode(b, benchPing) }
func BenchmarkDecodeToolsCallSmall(b *testing.B)      { benchDecode(b, benchSmallCall) }
func BenchmarkDecodeToolsCallSmallStrID(b *testing.B) { benchDecode(b, benchSmallCallStr) }

func BenchmarkAppendResultPing(b *testing.B) {
	id := IntID(1)
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendResult(buf[:0], id, benchEmptyResult)
	}
}

func BenchmarkAppendResultSmall(b *testing.B) {
	id := StringID("7")
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendResult(buf[:0], id, benchSmallResult)
	}
}

// repeatReader serves the same bytes over and over.
type repeatReader struct {
	data []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p, r.data[r.off:])
	r.off = (r.off + n) % len(r.data)
	return n, nil
}

// One line of stdio input: find its end, copy it out.
func BenchmarkLineReaderRead(b *testing.B) {
	lr := NewLineReader(&repeatReader{data: benchFramingStream}, 0)
	b.SetBytes(int64(len(benchCall) + 1))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lr.Read(); err != nil {
			b.Fatal(err)
		}
	}
}

// One line of stdio output, flushed on its own (a writer alone, as a
// sequential client sees it).
func BenchmarkLineWriterWrite(b *testing.B) {
	lw := NewLineWriter(io.Discard)
	msg := AppendResult(nil, IntID(12345), benchResult)
	b.SetBytes(int64(len(msg) + 1))
	b.ReportAllocs()
	for b.Loop() {
		if err := lw.Write(msg); err != nil {
			b.Fatal(err)
		}
	}
}

// Decode a line, then encode its reply: the message layer's whole share
// of a stdio round trip.
func BenchmarkDecodeEncodeRoundTrip(b *testing.B) {
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		m, err := DecodeMessage(benchSmallCall)
		if err != nil {
			b.Fatal(err)
		}
		buf = AppendResult(buf[:0], m.ID, benchSmallResult)
	}
}
