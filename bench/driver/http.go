package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// httpClient holds the connections of one phase: at most conns
// keep-alive connections to the server, each worker using one.
type httpClient struct {
	url   string
	hc    *http.Client
	tr    *http.Transport
	dials atomic.Int64
}

func newHTTPClient(url string, conns int) *httpClient {
	c := &httpClient{url: url}
	d := &net.Dialer{Timeout: 5 * time.Second}
	c.tr = &http.Transport{
		Proxy: nil, // loopback only, whatever the environment says
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c.dials.Add(1)
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConns:        conns + 4,
		MaxIdleConnsPerHost: conns + 4,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     60 * time.Second,
		DisableCompression:  true,
	}
	c.hc = &http.Client{Transport: c.tr, Timeout: 30 * time.Second}
	return c
}

func (c *httpClient) close() { c.tr.CloseIdleConnections() }

// session is one client of the server: a legacy session (its id, if the
// server gave one, and the negotiated version) or per-request stateless
// requests.
type session struct {
	id         string
	protocol   string
	perRequest bool
	hdr        http.Header // the headers of every tools/call
}

// post sends one message and reads the whole answer into buf.
func (c *httpClient) post(hdr http.Header, body []byte, buf *bytes.Buffer) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = hdr
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	return resp, err
}

var baseHeader = http.Header{
	"Content-Type": {"application/json"},
	"Accept":       {"application/json, text/event-stream"},
}

// reply finds the response to request id in an answer, plain JSON or an
// SSE stream (whose other events, the server's notifications and
// requests, are counted and skipped). kind is "" or the error kind.
func reply(resp *http.Response, body []byte, w *wire) (kind string, serverMsgs int) {
	if resp.StatusCode/100 != 2 {
		return "http_status", 0
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		*w = wire{}
		if decode(body, w) != nil {
			return "bad_json", 0
		}
		return "", 0
	case "text/event-stream":
		// Events end at a blank line; their data lines are joined.
		var data []byte
		for len(body) > 0 || len(data) > 0 {
			var line []byte
			if i := bytes.IndexByte(body, '\n'); i >= 0 {
				line, body = body[:i], body[i+1:]
			} else {
				line, body = body, nil
			}
			line = bytes.TrimSuffix(line, []byte{'\r'})
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(d, []byte{' '})...)
			}
			if len(line) > 0 && len(body) > 0 || len(data) == 0 {
				continue
			}
			*w = wire{}
			if decode(data, w) != nil {
				return "bad_json", serverMsgs
			}
			if !w.isServerMessage() {
				return "", serverMsgs
			}
			serverMsgs++
			data = data[:0]
		}
		return "sse_no_reply", serverMsgs
	}
	return "content_type", 0
}

// openSession initializes a legacy session (falling back to older
// versions when refused) and sends notifications/initialized.
func (c *httpClient) openSession(k int) (*session, error) {
	var buf bytes.Buffer
	for _, v := range legacyFallback {
		resp, err := c.post(baseHeader, appendRequest(nil, k, "initialize", initializeParams(v)), &buf)
		if err != nil {
			return nil, err
		}
		var w wire
		if kind, _ := reply(resp, buf.Bytes(), &w); kind != "" {
			if resp.StatusCode == http.StatusBadRequest {
				continue
			}
			return nil, fmt.Errorf("initialize: %s (HTTP %d) %.200s", kind, resp.StatusCode, buf.Bytes())
		}
		if w.Error != nil {
			continue
		}
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(w.Result, &res)
		s := &session{id: resp.Header.Get("Mcp-Session-Id"), protocol: res.ProtocolVersion}
		if s.protocol == "" {
			s.protocol = v
		}
		s.hdr = baseHeader.Clone()
		s.hdr.Set("Mcp-Protocol-Version", s.protocol)
		if s.id != "" {
			s.hdr.Set("Mcp-Session-Id", s.id)
		}
		resp, err = c.post(s.hdr, []byte(initializedNote), &buf)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("notifications/initialized: HTTP %d %.200s", resp.StatusCode, buf.Bytes())
		}
		return s, nil
	}
	return nil, errors.New("initialize: every protocol version refused")
}

func perRequestSession(tool string) *session {
	s := &session{perRequest: true, protocol: perRequestVersion, hdr: baseHeader.Clone()}
	s.hdr.Set("Mcp-Protocol-Version", perRequestVersion)
	s.hdr.Set("Mcp-Method", "tools/call")
	s.hdr.Set("Mcp-Name", tool)
	return s
}

// endSession deletes a legacy session; servers without DELETE may refuse.
func (c *httpClient) endSession(s *session) {
	if s.id == "" {
		return
	}
	req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
	req.Header = s.hdr
	if resp, err := c.hc.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// call sends request k (a tools/call echo) in session s and checks the
// answer: "" or the error kind.
func (c *httpClient) call(s *session, k int, tool, arg, check string, st *workerState) string {
	st.body = appendEcho(st.body[:0], k, tool, arg, s.perRequest)
	resp, err := c.post(s.hdr, st.body, &st.buf)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Timeout") {
			return "timeout"
		}
		return "transport"
	}
	kind, n := reply(resp, st.buf.Bytes(), &st.w)
	st.serverMsgs += n
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	st.replies[mt]++
	if kind != "" {
		if st.firstErr == "" {
			st.firstErr = fmt.Sprintf("%s: HTTP %d %.300s", kind, resp.StatusCode, st.buf.Bytes())
		}
		return kind
	}
	if e := checkID(st.w.ID, k); e != "" {
		return e
	}
	if e := checkEcho(&st.w, k, check, st.scratch); e != "" {
		if st.firstErr == "" {
			st.firstErr = fmt.Sprintf("%s: %.300s", e, st.buf.Bytes())
		}
		return e
	}
	return ""
}

type workerState struct {
	body, scratch []byte
	buf           bytes.Buffer
	w             wire
	lat           []time.Duration
	errs          map[string]int
	ok            int
	serverMsgs    int
	replies       map[string]int
	firstErr      string
}

// httpTarget is what a phase talks to.
type httpTarget struct {
	url         string
	tool, arg   string
	check       string
	pid         int // the server process, for its CPU time
	numbersFrom *atomic.Int64
}

// probePerRequest sends one 2026-07-28 tools/call: nil when the server answers
// it correctly.
func probePerRequest(t httpTarget) error {
	c := newHTTPClient(t.url, 1)
	defer c.close()
	st := &workerState{replies: map[string]int{}}
	if kind := c.call(perRequestSession(t.tool), int(t.numbersFrom.Add(2)), t.tool, t.arg, t.check, st); kind != "" {
		return fmt.Errorf("%s", st.firstErr)
	}
	return nil
}

// httpEcho runs n tools/call echo over clients concurrent clients, each
// one request at a time on its own keep-alive connection (and, for
// legacy, its own session), after warm unmeasured calls.
func httpEcho(rec *record, t httpTarget, clients, n, warm int, perRequest bool) {
	c := newHTTPClient(t.url, clients)
	defer c.close()
	rec.Clients = clients
	sessions := make([]*session, clients)
	for i := range sessions {
		if perRequest {
			sessions[i] = perRequestSession(t.tool)
			continue
		}
		s, err := c.openSession(int(t.numbersFrom.Add(2)))
		if err != nil {
			rec.Failed = err.Error()
			return
		}
		sessions[i] = s
	}
	rec.Protocol = sessions[0].protocol
	defer func() {
		for _, s := range sessions {
			c.endSession(s)
		}
	}()
	states := make([]*workerState, clients)
	for i := range states {
		states[i] = &workerState{errs: map[string]int{}, replies: map[string]int{}}
	}
	run := func(total int, measure bool) {
		var wg sync.WaitGroup
		for i := range clients {
			share := total / clients
			if i < total%clients {
				share++
			}
			st := states[i]
			if measure {
				st.lat = make([]time.Duration, 0, share)
			}
			wg.Go(func() {
				for range share {
					// Odd and even numbers alike: ids alternate types.
					k := int(t.numbersFrom.Add(1))
					t0 := time.Now()
					kind := c.call(sessions[i], k, t.tool, t.arg, t.check, st)
					d := time.Since(t0)
					if !measure {
						continue
					}
					st.lat = append(st.lat, d)
					if kind != "" {
						st.errs[kind]++
					} else {
						st.ok++
					}
					if kind == "transport" || kind == "timeout" {
						return
					}
				}
			})
		}
		wg.Wait()
	}
	run(max(warm, 2*clients), false)
	for _, st := range states {
		st.serverMsgs, st.replies = 0, map[string]int{}
	}
	dials := c.dials.Load()
	cpu0, _ := readCPU(t.pid)
	t0 := time.Now()
	run(n, true)
	rec.ElapsedS = time.Since(t0).Seconds()
	cpu1, _ := readCPU(t.pid)
	rec.NewConns = c.dials.Load() - dials
	var lat []time.Duration
	rec.Replies = map[string]int{}
	for _, st := range states {
		lat = append(lat, st.lat...)
		rec.OK += st.ok
		for k, v := range st.errs {
			for range v {
				rec.addError(k)
			}
		}
		for k, v := range st.replies {
			rec.Replies[k] += v
		}
		rec.ServerMsgs += st.serverMsgs
		if st.firstErr != "" && rec.Failed == "" && rec.errorCount() > 0 {
			rec.Failed = "first error: " + st.firstErr
		}
	}
	rec.N = n
	rec.RPS = float64(len(lat)) / rec.ElapsedS
	rec.latencies(lat)
	rec.CPUUsPer, rec.CPUSource = cpuPer(cpu0, cpu1, len(lat))
}

// idleSessions opens n legacy sessions (initialize and
// notifications/initialized, no GET stream) with a few concurrent
// openers, and reports the server's resident memory per session. It
// stops early if the server grows past rssCapKB. The first and last
// sessions are pinged at the end to check that the server kept them.
func idleSessions(rec *record, t httpTarget, n int, rssCapKB int64) {
	const openers = 8
	c := newHTTPClient(t.url, openers)
	defer c.close()
	// One session first, ended again, so that the code paths are warm
	// before the baseline.
	if s, err := c.openSession(int(t.numbersFrom.Add(2))); err != nil {
		rec.Failed = err.Error()
		return
	} else {
		c.endSession(s)
	}
	time.Sleep(300 * time.Millisecond)
	rec.RSSBeforeK = procStatusKB(t.pid, "VmRSS")
	sessions := make([]*session, n)
	var next, opened atomic.Int64
	var stop atomic.Bool
	var mu sync.Mutex
	t0 := time.Now()
	var wg sync.WaitGroup
	for range openers {
		wg.Go(func() {
			for !stop.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				s, err := c.openSession(int(t.numbersFrom.Add(2)))
				if err != nil {
					mu.Lock()
					rec.addError("open")
					if rec.Failed == "" {
						rec.Failed = err.Error()
					}
					mu.Unlock()
					continue
				}
				sessions[i] = s
				if o := opened.Add(1); o%500 == 0 && procStatusKB(t.pid, "VmRSS") > rssCapKB {
					stop.Store(true)
				}
			}
		})
	}
	wg.Wait()
	rec.ElapsedS = time.Since(t0).Seconds()
	time.Sleep(time.Second)
	rec.RSSAfterK = procStatusKB(t.pid, "VmRSS")
	rec.Sessions = int(opened.Load())
	rec.N = n
	rec.OK = rec.Sessions
	if stop.Load() {
		rec.Failed = fmt.Sprintf("stopped at %d sessions: the server passed %d MiB", rec.Sessions, rssCapKB>>10)
	}
	if rec.Sessions > 0 {
		rec.SessionKB = float64(rec.RSSAfterK-rec.RSSBeforeK) / float64(rec.Sessions)
	}
	// Were the sessions kept?
	var first, last *session
	for _, s := range sessions {
		if s != nil {
			if first == nil {
				first = s
			}
			last = s
		}
	}
	var buf bytes.Buffer
	for _, s := range []*session{first, last} {
		if s == nil || s.id == "" {
			continue
		}
		resp, err := c.post(s.hdr, appendRequest(nil, int(t.numbersFrom.Add(2)), "ping", ""), &buf)
		var w wire
		if err != nil {
			rec.addError("transport")
		} else if kind, _ := reply(resp, buf.Bytes(), &w); kind != "" || w.Error != nil {
			rec.addError("session_lost")
		}
	}
}
