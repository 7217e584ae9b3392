// Command limitproxy is the "limit" of the gateway hop: a net/http server
// that forwards every request to one upstream URL with a net/http client
// (kept-alive connections) and copies the answer back, doing no MCP work.
// What one such hop adds on loopback is what the HTTP stack allows a
// gateway to add; mcpgate's hop is measured against it.
//
//	limitproxy -http 127.0.0.1:18090 -upstream http://127.0.0.1:18089/mcp
package main

import (
	"bytes"
	"flag"
	"io"
	"log"
	"net/http"
	"sync"
	"time"
)

// The headers a Streamable HTTP exchange needs, each way.
var (
	requestHeaders  = []string{"Content-Type", "Accept", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id"}
	responseHeaders = []string{"Content-Type", "Mcp-Session-Id"}
	bufs            = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

func main() {
	addr := flag.String("http", "127.0.0.1:18090", "listen address")
	upstream := flag.String("upstream", "", "the URL every request is forwarded to")
	flag.Parse()
	if *upstream == "" {
		log.Fatal("limitproxy: -upstream is required")
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}}
	h := func(w http.ResponseWriter, r *http.Request) {
		in := bufs.Get().(*bytes.Buffer)
		defer bufs.Put(in)
		in.Reset()
		if _, err := io.Copy(in, io.LimitReader(r.Body, 4<<20)); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, *upstream, bytes.NewReader(in.Bytes()))
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		for _, k := range requestHeaders {
			if v := r.Header[k]; v != nil {
				req.Header[k] = v
			}
		}
		resp, err := client.Do(req)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for _, k := range responseHeaders {
			if v := resp.Header[k]; v != nil {
				w.Header()[k] = v
			}
		}
		if resp.ContentLength >= 0 {
			w.Header()["Content-Length"] = resp.Header["Content-Length"]
		}
		w.WriteHeader(resp.StatusCode)
		// An SSE answer is passed on as it comes; a sized one in one copy.
		if resp.ContentLength < 0 {
			f, _ := w.(http.Flusher)
			buf := make([]byte, 32<<10)
			for {
				n, err := resp.Body.Read(buf)
				if n > 0 {
					w.Write(buf[:n])
					if f != nil {
						f.Flush()
					}
				}
				if err != nil {
					return
				}
			}
		}
		io.Copy(w, resp.Body)
	}
	srv := &http.Server{Addr: *addr, Handler: http.HandlerFunc(h), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
