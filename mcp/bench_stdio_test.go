package mcp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// The stdio transport end to end, in process: ServeConn on OS pipes, a
// client that sends tools/call one at a time ("seq") or keeps 64 in
// flight ("pipe64"), as the bench suite's driver does. The client's own
// work shows in the figures too; the server's is what changes. cpu-µs/op
// is the process's CPU time (user and system) per call, where the
// platform reports it.
func BenchmarkServeStdioEcho(b *testing.B) {
	for _, window := range []int{1, 64} {
		b.Run(windowName(window), func(b *testing.B) {
			benchServeStdio(b, echoServer(nil), window, `"echo","arguments":{"text":"`+echoText+`"}`, `"text":"`+echoText+`"`)
		})
	}
}

// Tools whose handlers do a tool's usual work rather than echo, to judge
// the scheduling by: "search" decodes typed arguments and builds a result
// of about 4 KB (text and structured content); "tcp" asks a service on
// loopback TCP and waits for its answer, as a handler that calls a
// database or a local daemon does (a sleep would measure the timer: an
// idle Go program wakes from a 50 µs sleep after about a millisecond).
func BenchmarkServeStdioWork(b *testing.B) {
	s := workServer(b)
	for _, w := range []struct{ name, args, want string }{
		{"search", `"search","arguments":{"query":"alpha","limit":20,"tags":["x","y"],"exact":false}`, `"title":"alpha result 19"`},
		{"tcp", `"ask","arguments":{"text":"` + echoText + `"}`, `"text":"` + echoText + `"`},
	} {
		for _, window := range []int{1, 64} {
			b.Run(w.name+"/"+windowName(window), func(b *testing.B) { benchServeStdio(b, s, window, w.args, w.want) })
		}
	}
}

func windowName(window int) string {
	if window == 1 {
		return "seq"
	}
	return "pipe" + strconv.Itoa(window)
}

type searchIn struct {
	Query string   `json:"query" jsonschema:"what to look for"`
	Limit int      `json:"limit,omitempty" jsonschema:"the most results to return"`
	Tags  []string `json:"tags,omitempty"`
	Exact bool     `json:"exact,omitempty"`
}

type searchHit struct {
	Title   string   `json:"title"`
	URL     string   `json:"url"`
	Score   float64  `json:"score"`
	Snippet string   `json:"snippet"`
	Tags    []string `json:"tags"`
}

type searchOut struct {
	Hits []searchHit `json:"hits"`
}

// workServer serves the tools of BenchmarkServeStdioWork.
func workServer(b *testing.B) *Server {
	svc := newLoopbackEcho(b)
	s := NewServer(&Implementation{Name: "work", Version: "1"}, nil)
	AddTool(s, &Tool{Name: "search", Description: "Search the index"}, func(ctx context.Context, req *CallToolRequest, in searchIn) (*CallToolResult, searchOut, error) {
		out := searchOut{Hits: make([]searchHit, in.Limit)}
		for i := range out.Hits {
			out.Hits[i] = searchHit{
				Title:   fmt.Sprintf("%s result %d", in.Query, i),
				URL:     fmt.Sprintf("https://example.com/%s/%d", in.Query, i),
				Score:   1 / float64(i+1),
				Snippet: "a sentence or two of the matching document, as a search tool returns it",
				Tags:    in.Tags,
			}
		}
		return nil, out, nil
	})
	AddTool(s, &Tool{Name: "ask", Description: "Echo the text through a local service"}, func(ctx context.Context, req *CallToolRequest, in echoIn) (*CallToolResult, any, error) {
		text, err := svc.roundTrip(in.Text)
		if err != nil {
			return nil, nil, err
		}
		return TextResult(text), nil, nil
	})
	return s
}

// loopbackEcho is a TCP service on loopback that sends back each line it
// gets, and a pool of connections to it (one per request in flight).
type loopbackEcho struct {
	addr  string
	conns chan *bufio.ReadWriter
}

func newLoopbackEcho(b *testing.B) *loopbackEcho {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.Cleanup(func() { c.Close() })
			go io.Copy(c, c)
		}
	}()
	return &loopbackEcho{addr: ln.Addr().String(), conns: make(chan *bufio.ReadWriter, 128)}
}

func (e *loopbackEcho) roundTrip(text string) (string, error) {
	var rw *bufio.ReadWriter
	select {
	case rw = <-e.conns:
	default:
		c, err := net.Dial("tcp", e.addr)
		if err != nil {
			return "", err
		}
		rw = bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c))
	}
	rw.WriteString(text)
	rw.WriteByte('\n')
	if err := rw.Flush(); err != nil {
		return "", err
	}
	line, err := rw.ReadString('\n')
	if err != nil {
		return "", err
	}
	e.conns <- rw
	return strings.TrimSuffix(line, "\n"), nil
}

// benchServeStdio calls the tool named in nameArgs (the params' "name"
// and "arguments" members) b.N times and checks each reply holds want.
func benchServeStdio(b *testing.B, s *Server, window int, nameArgs, want string) {
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
	go func() { served <- s.ServeConn(ctx, NewStdioConn(inR, cw, 0), nil) }()
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
		buf = append(buf, `,"method":"tools/call","params":{"name":`+nameArgs+"}}\n"...)
		return buf
	}
	wantB := []byte(want)
	tokens := make(chan struct{}, window)
	for range window {
		tokens <- struct{}{}
	}
	b.ReportAllocs()
	writes0 := cw.n.Load()
	cpu0 := processCPU()
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
		if !bytes.Contains(line, wantB) {
			b.Fatalf("%s", line)
		}
		tokens <- struct{}{}
	}
	if err := <-werr; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cw.n.Load()-writes0)/float64(n), "writes/op")
	if cpu := processCPU(); cpu > 0 {
		b.ReportMetric(float64((cpu-cpu0).Microseconds())/float64(n), "cpu-µs/op")
	}
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
