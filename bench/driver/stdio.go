package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// replyTimeout bounds the wait for any one answer; a server that takes
// longer is reported as failed rather than hanging the run.
const replyTimeout = 10 * time.Second

// stdioConn is a client of a server over its stdin and stdout, one
// message per line.
type stdioConn struct {
	p          *proc
	wmu        sync.Mutex
	w          *bufio.Writer
	r          *bufio.Reader
	long       []byte
	next       int // the next request number
	serverMsgs int // notifications and requests from the server
	protocol   string
	startup    time.Duration // spawn to the first initialize answer
}

func startStdio(name string, argv, env []string, logf *os.File) (*stdioConn, error) {
	p, err := spawn(name, argv, env, true, false, logf)
	if err != nil {
		return nil, err
	}
	return &stdioConn{
		p: p,
		w: bufio.NewWriterSize(p.stdin, 64<<10),
		r: bufio.NewReaderSize(p.stdout, 1<<20),
	}, nil
}

// openStdio starts a server and initializes it, falling back to older
// protocol versions if it refuses the newest.
func openStdio(name string, argv, env []string, logf *os.File) (*stdioConn, error) {
	c, err := startStdio(name, argv, env, logf)
	if err != nil {
		return nil, err
	}
	for i, v := range legacyFallback {
		w, err := c.roundTrip(appendRequest(nil, c.take(), "initialize", initializeParams(v)), 60*time.Second)
		if i == 0 {
			c.startup = time.Since(c.p.start)
		}
		if err != nil {
			c.p.stop()
			return nil, fmt.Errorf("initialize: %w", err)
		}
		if w.Error != nil {
			continue
		}
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(w.Result, &res)
		c.protocol = res.ProtocolVersion
		if c.protocol == "" {
			c.protocol = v // the limit server's canned answer
		}
		if err := c.send([]byte(initializedNote)); err != nil {
			c.p.stop()
			return nil, err
		}
		return c, nil
	}
	c.p.stop()
	return nil, errors.New("initialize: every protocol version refused")
}

func (c *stdioConn) take() int {
	k := c.next
	c.next++
	return k
}

func (c *stdioConn) send(msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.w.Write(msg)
	c.w.WriteByte('\n')
	return c.w.Flush()
}

// readLine returns the next line, valid until the next call.
func (c *stdioConn) readLine() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		c.long = append(c.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = c.r.ReadSlice('\n')
			c.long = append(c.long, line...)
		}
		line = c.long
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, errors.New("timeout")
		}
		return nil, err
	}
	return line, nil
}

// readReply reads up to the next response, answering the server's
// requests with an error and counting its notifications.
func (c *stdioConn) readReply(w *wire) error {
	for {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		*w = wire{}
		if err := decode(line, w); err != nil {
			return fmt.Errorf("bad_json: %.200s", line)
		}
		if !w.isServerMessage() {
			return nil
		}
		c.serverMsgs++
		if w.isServerRequest() {
			if err := c.send(errorReply(w.ID)); err != nil {
				return err
			}
		}
	}
}

func (c *stdioConn) roundTrip(msg []byte, timeout time.Duration) (*wire, error) {
	c.p.stdout.SetReadDeadline(time.Now().Add(timeout))
	if err := c.send(msg); err != nil {
		return nil, err
	}
	w := new(wire)
	return w, c.readReply(w)
}

// Phases. Each returns a record with the counts and timings; the caller
// adds the server, repetition and CPU figures.

// seqEcho sends n tools/call echo one after the other.
func (c *stdioConn) seqEcho(rec *record, n int, tool, arg, check string) {
	c.runSeq(rec, n, func(b []byte, k int) []byte { return appendEcho(b, k, tool, arg, false) },
		func(w *wire, k int, scratch []byte) string { return checkEcho(w, k, check, scratch) })
}

func (c *stdioConn) runSeq(rec *record, n int, build func([]byte, int) []byte, check func(*wire, int, []byte) string) {
	lat := make([]time.Duration, 0, n)
	var b, scratch []byte
	var w wire
	t0 := time.Now()
	for i := range n {
		if i%256 == 0 {
			c.p.stdout.SetReadDeadline(time.Now().Add(replyTimeout))
		}
		k := c.take()
		b = append(build(b[:0], k), '\n')
		t := time.Now()
		c.wmu.Lock()
		c.w.Write(b)
		err := c.w.Flush()
		c.wmu.Unlock()
		if err == nil {
			err = c.readReply(&w)
		}
		if err != nil {
			rec.Failed = err.Error()
			break
		}
		lat = append(lat, time.Since(t))
		if e := checkID(w.ID, k); e != "" {
			rec.addError(e)
		} else if e := check(&w, k, scratch); e != "" {
			rec.addError(e)
		} else {
			rec.OK++
		}
	}
	rec.ElapsedS = time.Since(t0).Seconds()
	rec.N = n
	rec.RPS = float64(len(lat)) / rec.ElapsedS
	rec.latencies(lat)
	rec.ServerMsgs = c.serverMsgs
}

// pipeEcho sends n tools/call echo keeping window requests in flight: a
// writer sends while the window has room, batching what it can into one
// write; each answer frees a slot.
func (c *stdioConn) pipeEcho(rec *record, n, window int, tool, arg, check string) {
	k0 := c.next
	c.next += n
	sent := make([]int64, n) // ns since base, written by the writer
	got := make([]bool, n)
	lat := make([]time.Duration, 0, n)
	tokens := make(chan struct{}, window)
	for range window {
		tokens <- struct{}{}
	}
	abort := make(chan struct{})
	writerDone := make(chan error, 1)
	base := time.Now()
	go func() {
		var b []byte
		for i := range n {
			select {
			case <-tokens:
			default:
				c.wmu.Lock()
				err := c.w.Flush()
				c.wmu.Unlock()
				if err != nil {
					writerDone <- err
					return
				}
				select {
				case <-tokens:
				case <-abort:
					writerDone <- nil
					return
				}
			}
			b = append(appendEcho(b[:0], k0+i, tool, arg, false), '\n')
			atomic.StoreInt64(&sent[i], int64(time.Since(base)))
			c.wmu.Lock()
			c.w.Write(b)
			c.wmu.Unlock()
		}
		c.wmu.Lock()
		err := c.w.Flush()
		c.wmu.Unlock()
		writerDone <- err
	}()
	var w wire
	var scratch []byte
	latest := -1
	for answered := 0; answered < n; {
		if answered%256 == 0 {
			c.p.stdout.SetReadDeadline(time.Now().Add(replyTimeout))
		}
		if err := c.readReply(&w); err != nil {
			rec.Failed = err.Error()
			break
		}
		now := int64(time.Since(base))
		k, typeOK, ok := parseID(w.ID)
		i := k - k0
		if !ok || i < 0 || i >= n {
			rec.addError("id_unknown")
			continue
		}
		if got[i] {
			rec.addError("id_dup")
			continue
		}
		got[i] = true
		answered++
		tokens <- struct{}{}
		lat = append(lat, time.Duration(now-atomic.LoadInt64(&sent[i])))
		if i < latest {
			rec.OutOfOrder++
		}
		latest = max(latest, i)
		if !typeOK {
			rec.addError("id_type")
		} else if e := checkEcho(&w, k, check, scratch); e != "" {
			rec.addError(e)
		} else {
			rec.OK++
		}
	}
	rec.ElapsedS = time.Since(base).Seconds()
	close(abort)
	if err := <-writerDone; err != nil && rec.Failed == "" {
		rec.Failed = "write: " + err.Error()
	}
	rec.N = n
	rec.Clients = window
	rec.RPS = float64(len(lat)) / rec.ElapsedS
	rec.latencies(lat)
	rec.ServerMsgs = c.serverMsgs
}

// toolsList lists the tools n times, each time every page, and checks
// that all want tools (echo among them) came back.
func (c *stdioConn) toolsList(rec *record, n, want int) {
	lat := make([]time.Duration, 0, n)
	t0 := time.Now()
	for range n {
		t := time.Now()
		tools, pages, echo := 0, 0, false
		cursor := ""
		var err error
		for pages < 100 {
			params := ""
			if cursor != "" {
				cb, _ := json.Marshal(cursor)
				params = `{"cursor":` + string(cb) + `}`
			}
			var w *wire
			w, err = c.roundTrip(appendRequest(nil, c.take(), "tools/list", params), replyTimeout)
			if err != nil {
				break
			}
			pages++
			var res struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
				NextCursor string `json:"nextCursor"`
			}
			if w.Error != nil || json.Unmarshal(w.Result, &res) != nil {
				rec.addError("rpc_error")
				break
			}
			tools += len(res.Tools)
			for _, tl := range res.Tools {
				echo = echo || tl.Name == "echo"
			}
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		if err != nil {
			rec.Failed = err.Error()
			break
		}
		lat = append(lat, time.Since(t))
		rec.Tools, rec.Pages = tools, pages
		if tools != want || !echo {
			rec.addError("tool_count")
		} else {
			rec.OK++
		}
	}
	rec.ElapsedS = time.Since(t0).Seconds()
	rec.N = n
	rec.RPS = float64(len(lat)) / rec.ElapsedS
	rec.latencies(lat)
}

// startupOnce starts a server, sends initialize at once and times the
// answer; the server is stopped again.
func startupOnce(name string, argv, env []string, logf *os.File) (time.Duration, error) {
	c, err := startStdio(name, argv, env, logf)
	if err != nil {
		return 0, err
	}
	defer c.p.stop()
	w, err := c.roundTrip(appendRequest(nil, c.take(), "initialize", initializeParams(legacyVersion)), 60*time.Second)
	d := time.Since(c.p.start)
	if err != nil {
		return 0, err
	}
	if w.Error != nil {
		return 0, fmt.Errorf("initialize: %s", w.Error.Message)
	}
	return d, nil
}
