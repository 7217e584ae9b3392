package testservice

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// HAProxyOptions configure [HAProxy]. The zero value is the load
// balancer that issue 23's tests put in front of replicas.
type HAProxyOptions struct {
	// HealthPath is the path of an HTTP GET health check: a backend that
	// does not answer it with 2xx or 3xx is taken out of the rotation.
	// Default "": a TCP connect check.
	HealthPath string
	// RetryOn is HAProxy's retry-on list: which failures of a request
	// are retried, on another backend. Default "conn-failure
	// empty-response": a backend that refused the connection, or closed
	// it without answering (killed mid-request).
	RetryOn string
	// MaxConn is the most connections HAProxy accepts at once. Default
	// as many as the open-file limit allows, each taking two descriptors
	// (client and backend), at most 50000.
	MaxConn int
}

// HAProxyServer is an haproxy owned by a test: HTTP round robin over
// backends, with no stickiness.
type HAProxyServer struct {
	tb   testing.TB
	bin  string
	dir  string
	opts HAProxyOptions
	port int
	gen  int        // the config's generation, one more at each Reload
	ps   []*process // every generation; the last one is current
}

// HAProxy starts an haproxy on a free loopback port that balances HTTP
// requests over backends (host:port, or http:// URLs whose path is
// ignored) round robin, without stickiness. Backends are health checked
// every 250ms (out after 2 failures, back after 1 success); a request
// that finds its backend dead is retried on another (retries 3,
// redispatch on every retry). Client, server and tunnel timeouts are an
// hour, for SSE streams; connecting to a backend times out after 1s.
// The test's cleanup stops it; when the test failed, haproxy's warnings
// are in the test's log. opts may be nil.
func HAProxy(tb testing.TB, backends []string, opts *HAProxyOptions) *HAProxyServer {
	tb.Helper()
	h := &HAProxyServer{tb: tb, bin: binary(tb, "haproxy", "haproxy"), dir: tb.TempDir()}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.RetryOn == "" {
		h.opts.RetryOn = "conn-failure empty-response"
	}
	if h.opts.MaxConn == 0 {
		h.opts.MaxConn = defaultMaxConn()
	}
	p := h.generation()
	h.port = startOnFreePort(tb, p, func(port int) []string {
		h.port = port
		return h.args(backends, 0)
	})
	return h
}

// URL is the load balancer's address, http://127.0.0.1:PORT.
func (h *HAProxyServer) URL() string { return "http://" + h.Addr() }

// Addr is the load balancer's host:port.
func (h *HAProxyServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(h.port)) }

// Reload replaces the backends without closing the port: a new haproxy
// takes over the listening socket and the old one finishes the requests
// it has (for at most 10 seconds, then closes what is left, streams
// included).
func (h *HAProxyServer) Reload(backends []string) {
	h.tb.Helper()
	old := h.ps[len(h.ps)-1].pid()
	p := h.generation()
	p.args = h.args(backends, old)
	if err := p.start(); err != nil {
		h.tb.Fatalf("testservice: reloading haproxy: %v", err)
	}
}

// Stop stops haproxy, every generation of it, closing every connection.
func (h *HAProxyServer) Stop() {
	for _, p := range h.ps {
		p.stop(syscall.SIGTERM)
	}
}

// Start starts a stopped haproxy again, on the same port with the last
// backends.
func (h *HAProxyServer) Start() {
	h.tb.Helper()
	p := h.ps[len(h.ps)-1]
	p.args = slicesWithout(p.args, "-sf")
	if err := p.start(); err != nil {
		h.tb.Fatalf("testservice: restarting haproxy on %s: %v", h.Addr(), err)
	}
}

func (h *HAProxyServer) generation() *process {
	h.gen++
	p := newProcess(h.tb, h.bin, h.dir, nil, syscall.SIGTERM)
	p.log = filepath.Join(h.dir, fmt.Sprintf("haproxy-%d.log", h.gen))
	sock := h.socket()
	p.ready = func() error {
		c, err := net.DialTimeout("unix", sock, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
	h.ps = append(h.ps, p)
	return p
}

// socket is the current generation's admin socket: it answers once that
// haproxy has bound its ports, which is how a start knows it is ready.
func (h *HAProxyServer) socket() string {
	return filepath.Join(h.dir, fmt.Sprintf("admin-%d.sock", h.gen))
}

// args writes the current generation's config and returns haproxy's
// arguments; old, when not 0, is the pid of the haproxy it takes over
// from.
func (h *HAProxyServer) args(backends []string, old int) []string {
	h.tb.Helper()
	cfg := filepath.Join(h.dir, fmt.Sprintf("haproxy-%d.cfg", h.gen))
	text, err := haproxyConfig(h.port, h.socket(), backends, h.opts)
	if err == nil {
		err = os.WriteFile(cfg, []byte(text), 0o644)
	}
	if err != nil {
		h.tb.Fatalf("testservice: haproxy config: %v", err)
	}
	args := []string{"-db", "-f", cfg}
	if old != 0 {
		args = append(args, "-sf", strconv.Itoa(old))
	}
	return args
}

// haproxyConfig is the config of [HAProxy]; opts has its defaults.
func haproxyConfig(port int, socket string, backends []string, opts HAProxyOptions) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, `global
	maxconn %d
	log stderr format raw local0 notice
	stats socket %s mode 600 level admin
	hard-stop-after 10s

defaults
	mode http
	log global
	option httplog
	option dontlog-normal
	timeout connect 1s
	timeout client 1h
	timeout server 1h
	timeout tunnel 1h
	retries 3
	option redispatch 1
	retry-on %s
	# SSE events are small and interactive: without this haproxy sends
	# with MSG_MORE and the kernel may hold an event for 200ms.
	option http-no-delay
	# A 2026-07-28 client cancels by closing its response stream: pass
	# the close on to the backend at once, not at the next write.
	option abortonclose

frontend in
	bind 127.0.0.1:%d
	default_backend replicas

backend replicas
	balance roundrobin
`, opts.MaxConn, socket, opts.RetryOn, port)
	if opts.HealthPath != "" {
		fmt.Fprintf(&b, "\toption httpchk GET %s\n", opts.HealthPath)
	}
	for i, be := range backends {
		addr, err := backendAddr(be)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\tserver r%d %s check inter 250ms fall 2 rise 1\n", i, addr)
	}
	return b.String(), nil
}

// backendAddr takes host:port out of a backend given as host:port or as
// an http:// URL.
func backendAddr(be string) (string, error) {
	if strings.Contains(be, "://") {
		u, err := url.Parse(be)
		if err != nil {
			return "", fmt.Errorf("backend %q: %w", be, err)
		}
		if u.Scheme != "http" {
			return "", fmt.Errorf("backend %q: only http:// backends are balanced", be)
		}
		be = u.Host
	}
	if _, _, err := net.SplitHostPort(be); err != nil {
		return "", fmt.Errorf("backend %q: want host:port or an http:// URL: %w", be, err)
	}
	return be, nil
}

// slicesWithout drops flag and the value after it from args.
func slicesWithout(args []string, flag string) []string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return append(args[:i:i], args[i+2:]...)
		}
	}
	return args
}

// defaultMaxConn fits maxconn to the hard open-file limit, which haproxy
// raises its own soft limit to; a maxconn above it makes haproxy refuse
// to start unless it may raise the hard limit too, which a container's
// root often may not.
func defaultMaxConn() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Max < 1200 {
		return 500
	}
	return int(min(lim.Max-200, 100000) / 2)
}
