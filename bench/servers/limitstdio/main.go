// Command limitstdio is the stdio "limit" of the benchmark: it does no MCP
// work at all. For every line that carries an id it writes one canned
// response line with that id (a tools/call result of the size of an echo
// reply); lines without an id (notifications) get nothing. What it reaches
// is what the pipes, the process switches and the driver allow.
package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strings"
)

var (
	head = []byte(`{"jsonrpc":"2.0","id":`)
	tail = []byte(`,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 100) + `"}]}}` + "\n")
	key  = []byte(`"id":`)
)

// requestID is the raw JSON value of the first "id" member of line, nil
// when there is none. The driver writes the id before params, so the
// first one is the request's.
func requestID(line []byte) []byte {
	i := bytes.Index(line, key)
	if i < 0 {
		return nil
	}
	v := bytes.TrimLeft(line[i+len(key):], " \t")
	if len(v) > 0 && v[0] == '"' {
		for j := 1; j < len(v); j++ {
			switch v[j] {
			case '\\':
				j++
			case '"':
				return v[:j+1]
			}
		}
		return nil
	}
	end := bytes.IndexAny(v, ",} \t\r\n")
	if end <= 0 {
		return nil
	}
	return v[:end]
}

func main() {
	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	var long []byte
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if id := requestID(line); id != nil {
			w.Write(head)
			w.Write(id)
			w.Write(tail)
		}
		// Answers to requests that arrived together leave together.
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				os.Exit(1)
			}
			w.Flush()
			return
		}
	}
}
