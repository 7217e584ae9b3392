package mcp

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
)

// The stdio transport end to end, in process: ServeConn on OS pipes, a
// client that sends tools/call echo one at a time ("seq") or keeps 64 in
// flight ("pipe64"), as the bench suite's driver does. The client's own
// work shows in profiles too; the server's is what changes.
func BenchmarkServeStdioEcho(b *testing.B) {
	for _, window := range []int{1, 64} {
		name := "seq"
		if window > 1 {
			name = "pipe" + strconv.Itoa(window)
		}
		b.Run(name, func(b *testing.B) { benchServeStdio(b, window) })
	}
}

func benchServeStdio(b *testing.B, window int) {
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	cw := &countWriter{w: outW}
	go func() { served <- echoServer(nil).ServeConn(ctx, NewStdioConn(inR, cw, 0), nil) }()
	defer func() {
		inW.Close()
		cancel()
		<-served
		outR.Close()
	}()
	w := bufio.NewWriterSize(inW, 64<<10)
	r := bufio.NewReaderSize(outR, 1<<20)
	send := func(s string) {
		w.WriteString(s)
		w.WriteByte('\n')
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	w.Flush()
	if _, err := r.ReadSlice('\n'); err != nil {
		b.Fatal(err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	w.Flush()
	call := func(buf []byte, k int) []byte {
		buf = append(buf, `{"jsonrpc":"2.0","id":`...)
		buf = strconv.AppendInt(buf, int64(k), 10)
		buf = append(buf, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`+echoText+`"}}}`+"\n"...)
		return buf
	}
	want := []byte(`"text":"` + echoText + `"`)
	tokens := make(chan struct{}, window)
	for range window {
		tokens <- struct{}{}
	}
	b.ReportAllocs()
	writes0 := cw.n.Load()
	n := b.N
	werr := make(chan error, 1)
	go func() {
		var buf []byte
		for i := range n {
			select {
			case <-tokens:
			default:
				if err := w.Flush(); err != nil {
					werr <- err
					return
				}
				<-tokens
			}
			buf = call(buf[:0], i+1)
			w.Write(buf)
		}
		werr <- w.Flush()
	}()
	for range n {
		line, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(line, want) {
			b.Fatalf("%s", line)
		}
		tokens <- struct{}{}
	}
	if err := <-werr; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cw.n.Load()-writes0)/float64(n), "writes/op")
}

// countWriter counts the server's writes (system calls, for a pipe).
type countWriter struct {
	w *os.File
	n atomic.Int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.w.Write(p)
}

func (c *countWriter) Close() error { return c.w.Close() }
