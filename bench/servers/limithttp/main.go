// Command limithttp is the HTTP "limit" of the benchmark: a plain net/http
// handler that does no MCP work. A POST whose body carries an id is
// answered with one canned response carrying that id (a tools/call result
// of the size of an echo reply); one without (a notification) gets 202. No
// sessions, no checks. What it reaches is what the HTTP stack and the
// driver allow.
//
//	limithttp -http 127.0.0.1:18089        application/json replies
//	limithttp -http 127.0.0.1:18089 -sse   the same reply as one SSE event
package main

import (
	"bytes"
	"flag"
	"io"
	"log"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	head = []byte(`{"jsonrpc":"2.0","id":`)
	tail = []byte(`,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 100) + `"}]}}`)
	key  = []byte(`"id":`)
	bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// requestID is the raw JSON value of the first "id" member of body, nil
// when there is none.
func requestID(body []byte) []byte {
	i := bytes.Index(body, key)
	if i < 0 {
		return nil
	}
	v := bytes.TrimLeft(body[i+len(key):], " \t")
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
	addr := flag.String("http", "127.0.0.1:18089", "listen address (path /mcp)")
	sse := flag.Bool("sse", false, "answer with one SSE event instead of application/json")
	flag.Parse()
	ctype := []string{"application/json"}
	if *sse {
		ctype = []string{"text/event-stream"}
	}
	h := func(w http.ResponseWriter, r *http.Request) {
		in := bufs.Get().(*bytes.Buffer)
		out := bufs.Get().(*bytes.Buffer)
		defer bufs.Put(in)
		defer bufs.Put(out)
		in.Reset()
		out.Reset()
		if _, err := io.Copy(in, io.LimitReader(r.Body, 4<<20)); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		id := requestID(in.Bytes())
		if id == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if *sse {
			out.WriteString("event: message\ndata: ")
		}
		out.Write(head)
		out.Write(id)
		out.Write(tail)
		if *sse {
			out.WriteString("\n\n")
		}
		hd := w.Header()
		hd["Content-Type"] = ctype
		hd["Content-Length"] = []string{strconv.Itoa(out.Len())}
		w.Write(out.Bytes())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", h)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
