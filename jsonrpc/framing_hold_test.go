package jsonrpc

import (
	"bytes"
	"io"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Writes made while the writer is held reach the stream at the last
// Release, together; without a hold every write is flushed at once.
func TestLineWriterHold(t *testing.T) {
	var out syncBuffer
	lw := NewLineWriter(&out)
	if err := lw.Write([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "{\"a\":1}\n" {
		t.Fatalf("unheld write: %q", got)
	}
	lw.Hold()
	lw.Hold()
	lw.Write([]byte(`{"b":2}`))
	lw.Write([]byte(`{"c":3}`))
	if got := out.String(); got != "{\"a\":1}\n" {
		t.Fatalf("held writes reached the stream: %q", got)
	}
	if err := lw.Release(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "{\"a\":1}\n" {
		t.Fatalf("flushed before the last release: %q", got)
	}
	if err := lw.Release(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n" {
		t.Fatalf("after the last release: %q", got)
	}
	// A release with nothing kept back writes nothing.
	lw.Hold()
	lw.Release()
	lw.Write([]byte(`{"d":4}`))
	if got := out.String(); got != "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n{\"d\":4}\n" {
		t.Fatalf("after an empty hold: %q", got)
	}
}

// Holds, releases and writes from many goroutines: every message arrives
// once the last hold is released.
func TestLineWriterHoldConcurrent(t *testing.T) {
	var out syncBuffer
	lw := NewLineWriter(&out)
	var wg sync.WaitGroup
	for range 50 {
		lw.Hold()
		wg.Add(1)
		go func() {
			defer wg.Done()
			lw.Release()
			lw.Write([]byte(`{}`))
		}()
	}
	wg.Wait()
	if got := out.String(); got != string(bytes.Repeat([]byte("{}\n"), 50)) {
		t.Fatalf("%d bytes written, want %d", len(got), 150)
	}
}

// LineWaiting tells a whole line in the buffer from a part of one.
func TestLineReaderLineWaiting(t *testing.T) {
	pr, pw := io.Pipe()
	lr := NewLineReader(pr, 0)
	go pw.Write([]byte("{\"a\":1}\n{\"b\""))
	if line, err := lr.Read(); err != nil || string(line) != `{"a":1}` {
		t.Fatalf("Read: %q %v", line, err)
	}
	if lr.LineWaiting() {
		t.Fatal("a part of a line counts as waiting")
	}
	go pw.Write([]byte(":2}\n{\"c\":3}\n"))
	if line, err := lr.Read(); err != nil || string(line) != `{"b":2}` {
		t.Fatalf("Read: %q %v", line, err)
	}
	if !lr.LineWaiting() {
		t.Fatal("a whole line is waiting")
	}
}
