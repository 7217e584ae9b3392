package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("y", 200)
	in := "a\n\n  \r\nb\r\n" + `{"id":"big","x":"` + long + "\"}\nc\n" + strings.Repeat("z", 150<<10) + "\nd"
	lr := NewLineReader(strings.NewReader(in), 100)
	var got []string
	for {
		line, err := lr.Read()
		if err == io.EOF {
			break
		}
		var tl *TooLargeError
		if errors.As(err, &tl) {
			got = append(got, "TOO LARGE "+PeekID(tl.Prefix).String())
			if tl.Limit != 100 || tl.Size <= 100 {
				t.Errorf("TooLargeError = %+v", tl)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
	}
	want := []string{"a", "b\r", `TOO LARGE "big"`, "c", "TOO LARGE null", "d"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q\nwant    %q", got, want)
	}
}

func TestLineReaderLongLineWithinLimit(t *testing.T) {
	line := strings.Repeat("q", 300<<10) // longer than the bufio buffer
	lr := NewLineReader(strings.NewReader(line+"\n"+line), 0)
	for i := 0; i < 2; i++ {
		got, err := lr.Read()
		if err != nil || string(got) != line {
			t.Fatalf("read %d: len %d, err %v", i, len(got), err)
		}
	}
	if _, err := lr.Read(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
}

func TestLineWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	lw := NewLineWriter(&buf)
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				if err := lw.Write([]byte(`{"a":"` + strings.Repeat("x", 1000) + `"}`)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 5000 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if len(l) != 1008 {
			t.Fatalf("interleaved line of %d bytes", len(l))
		}
	}
	if err := lw.Write([]byte("a\nb")); err == nil {
		t.Error("newline accepted")
	}
}
