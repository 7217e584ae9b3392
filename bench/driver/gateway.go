package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The gateway hop: tools/call echo sent to mcpgate's echo server directly,
// and through `mcpgate serve --config` with that server as its upstream
// (published as echo_echo), one request at a time. Phases:
//
//	gw_stdio_direct     the client runs the echo server over stdio
//	gw_http_via_stdio   the client talks HTTP to the gateway, which runs the echo server over stdio
//	gw_stdio_via_stdio  the client runs the gateway over stdio, which runs the echo server over stdio
//	gw_http_direct      the client talks HTTP to the echo server
//	gw_http_via_http    the client talks HTTP to the gateway, which talks HTTP to the echo server
//	gw_http_via_limit   the same through limitproxy, a net/http forwarder doing no MCP work:
//	                    what the HTTP stack allows a hop to add
//
// Server CPU of a via phase is the gateway's own. With a baseline build
// the phases run again on bin/echo-baseline and bin/mcpgate-baseline,
// recorded as gateway-baseline, all but gw_http_via_limit (no mcpgate in
// it).

const gwTool = "echo_echo"

// A gatewayBuild is the mcpgate whose gateway hop a round of phases
// measures: key is its records' server, suffix that of its binaries,
// env more environment for the gateway.
type gatewayBuild struct {
	key, label, suffix string
	env                []string
}

const (
	gatewayBaseline = "gateway-baseline"
	// gatewayTraced is this mcpgate with OpenTelemetry on, sampling
	// every request, exporting traces and metrics over OTLP/HTTP to a
	// sink in the driver: what tracing adds per call.
	gatewayTraced = "gateway-traced"
)

// tracedEnv is the environment of the traced gateway: every request
// sampled (a sampler of 1.0), spans and metrics sent to endpoint.
func tracedEnv(endpoint string) []string {
	return []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint,
		"OTEL_TRACES_SAMPLER=always_on",
		"OTEL_SERVICE_NAME=mcpgate-bench",
	}
}

// otlpSink accepts OTLP/HTTP exports and discards them, answering each
// with an empty export response (an empty protobuf message has no
// bytes), so that the traced gateway exports as it would to a
// collector. It returns the sink's base URL and how to stop it.
func otlpSink() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

func (r *run) gatewayPhases(work string, gb gatewayBuild) {
	bin := func(name string) string { return filepath.Join(work, "bin", name) }
	base := record{Server: gb.key, Label: gb.label}
	dir, err := os.MkdirTemp("", "mcpgate-bench-gw-")
	if err != nil {
		rec := base
		rec.Phase, rec.Failed = "gw_stdio_direct", err.Error()
		r.emit(rec)
		return
	}
	defer os.RemoveAll(dir)
	echo := bin("echo" + gb.suffix)
	writeConfig := func(name string, upstream map[string]any) string {
		upstream["start"] = "eager"
		b, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"echo": upstream}}, "", "  ")
		path := filepath.Join(dir, name)
		os.WriteFile(path, b, 0o644)
		return path
	}
	gwArgs := func(cfg string) []string {
		return []string{bin("mcpgate" + gb.suffix), "serve", "--config", cfg, "--db", filepath.Join(dir, "tasks.db"), "--log-level", r.set.gwLog}
	}
	n := r.set.gwN

	// stdio upstream.
	rec := base
	rec.Phase = "gw_stdio_direct"
	if c, err := openStdio("echo"+gb.suffix, []string{echo}, nil, r.logf); err != nil {
		rec.Failed = err.Error()
	} else {
		r.stdioSeq(&rec, c, "echo", n)
		c.p.stop()
	}
	r.emit(rec)

	stdioCfg := writeConfig("stdio.json", map[string]any{"command": echo})
	rec = base
	rec.Phase = "gw_http_via_stdio"
	r.viaHTTP(&rec, gwArgs(stdioCfg), gb.env, n, gwTool)
	r.emit(rec)

	rec = base
	rec.Phase = "gw_stdio_via_stdio"
	if c, err := openStdio("gateway"+gb.suffix, append(gwArgs(stdioCfg), "--stdio"), gb.env, r.logf); err != nil {
		rec.Failed = err.Error()
	} else {
		if err := waitToolStdio(c, gwTool); err != nil {
			rec.Failed = err.Error()
		} else {
			r.stdioSeq(&rec, c, gwTool, n)
		}
		c.p.stop()
	}
	r.emit(rec)

	// HTTP upstream.
	port, err := freePort()
	if err != nil {
		return
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	up, err := spawn("echo-http"+gb.suffix, []string{echo, "-http", addr}, nil, false, false, r.logf)
	if err == nil {
		err = waitListening(up, port, 30*time.Second)
	}
	rec = base
	rec.Phase = "gw_http_direct"
	if err != nil {
		rec.Failed = err.Error()
		r.emit(rec)
		if up != nil {
			up.stop()
		}
		return
	}
	defer up.stop()
	t := httpTarget{url: "http://" + addr + "/mcp", tool: "echo", arg: "text", check: checkExact, pid: up.pid, numbersFrom: &r.ids}
	httpEcho(&rec, t, 1, n, r.set.warm, false)
	r.emit(rec)

	rec = base
	rec.Phase = "gw_http_via_http"
	r.viaHTTP(&rec, gwArgs(writeConfig("http.json", map[string]any{"url": t.url})), gb.env, n, gwTool)
	r.emit(rec)
	if gb.suffix != "" || gb.env != nil {
		return
	}

	rec = base
	rec.Phase = "gw_http_via_limit"
	rec.Label = "limitproxy (no MCP work)"
	r.viaHTTP(&rec, []string{bin("limitproxy"), "-upstream", t.url}, nil, n, "echo")
	r.emit(rec)
}

func (r *run) stdioSeq(rec *record, c *stdioConn, tool string, n int) {
	warm := record{}
	c.seqEcho(&warm, r.set.warm, tool, "text", checkExact)
	if warm.Failed != "" {
		rec.Failed = "warm-up: " + warm.Failed
		return
	}
	measureCPU(rec, c.p.pid, func() { c.seqEcho(rec, n, tool, "text", checkExact) })
}

// viaHTTP starts the gateway (or the limit proxy) on a free port and runs
// the calls of tool through it; env is more environment for it.
func (r *run) viaHTTP(rec *record, argv, env []string, n int, tool string) {
	port, err := freePort()
	if err != nil {
		rec.Failed = err.Error()
		return
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	flag := "--addr"
	if filepath.Base(argv[0]) == "limitproxy" {
		flag = "-http"
	}
	p, err := spawn(filepath.Base(argv[0]), append(argv, flag, addr), env, false, false, r.logf)
	if err != nil {
		rec.Failed = err.Error()
		return
	}
	defer p.stop()
	if err := waitListening(p, port, 30*time.Second); err != nil {
		rec.Failed = err.Error()
		return
	}
	t := httpTarget{url: "http://" + addr + "/mcp", tool: tool, arg: "text", check: checkExact, pid: p.pid, numbersFrom: &r.ids}
	if err := waitToolHTTP(t); err != nil {
		rec.Failed = err.Error()
		return
	}
	httpEcho(rec, t, 1, n, r.set.warm, false)
}

// The gateway connects its upstream in the background: wait (bounded)
// until a call of the prefixed tool succeeds.
func waitToolHTTP(t httpTarget) error {
	c := newHTTPClient(t.url, 1)
	defer c.close()
	var last string
	for range 150 {
		s, err := c.openSession(int(t.numbersFrom.Add(1)))
		if err == nil {
			st := &workerState{replies: map[string]int{}}
			kind := c.call(s, int(t.numbersFrom.Add(1)), t.tool, t.arg, t.check, st)
			c.endSession(s)
			if kind == "" {
				return nil
			}
			last = st.firstErr
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s never answered: %s", t.tool, last)
}

func waitToolStdio(c *stdioConn, tool string) error {
	var last string
	for range 150 {
		k := c.take()
		w, err := c.roundTrip(appendEcho(nil, k, tool, "text", false), replyTimeout)
		if err != nil {
			return err
		}
		if checkID(w.ID, k) == "" && checkEcho(w, k, checkExact, nil) == "" {
			return nil
		}
		if w.Error != nil {
			last = w.Error.Message
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s never answered: %s", tool, last)
}
