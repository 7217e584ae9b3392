package testservice

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RedisOptions configure [RedisWith]. The zero value is a server that
// keeps nothing on disk.
type RedisOptions struct {
	// AppendOnly turns on the append-only file, synced on every write,
	// so that data outlives Stop, Kill and Start. Default off: a restart
	// starts empty.
	AppendOnly bool
}

// RedisServer is a redis-server owned by a test.
type RedisServer struct {
	tb   testing.TB
	p    *process
	port int
}

// Redis starts a redis-server on a free loopback port that keeps nothing
// on disk; the test's cleanup stops it.
func Redis(tb testing.TB) *RedisServer {
	tb.Helper()
	return RedisWith(tb, RedisOptions{})
}

// RedisWith is [Redis] with options.
func RedisWith(tb testing.TB, opts RedisOptions) *RedisServer {
	tb.Helper()
	bin := binary(tb, "redis-server", "redis-server")
	dir := tb.TempDir()
	r := &RedisServer{tb: tb, p: newProcess(tb, bin, dir, nil, syscall.SIGTERM)}
	appendOnly := "no"
	if opts.AppendOnly {
		appendOnly = "yes"
	}
	r.p.ready = func() error { return redisPing(r.Addr()) }
	r.port = startOnFreePort(tb, r.p, func(port int) []string {
		r.port = port
		return []string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--dir", dir, "--daemonize", "no", "--logfile", "",
			"--save", "", "--appendonly", appendOnly, "--appendfsync", "always",
			"--loglevel", "warning",
		}
	})
	return r
}

// Addr is the server's host:port.
func (r *RedisServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port)) }

// URL is the server's database 0, redis://127.0.0.1:PORT/0.
func (r *RedisServer) URL() string { return "redis://" + r.Addr() + "/0" }

// Stop shuts the server down gracefully (SIGTERM) and waits for it to
// exit. Without [RedisOptions.AppendOnly] its data is gone.
func (r *RedisServer) Stop() { r.p.stop(syscall.SIGTERM) }

// Kill kills the server with SIGKILL, as a crash would, and waits for it
// to exit.
func (r *RedisServer) Kill() { r.p.stop(syscall.SIGKILL) }

// Start starts a stopped server again on the same port and directory,
// and waits until it answers. A running server is left alone.
func (r *RedisServer) Start() {
	r.tb.Helper()
	if err := r.p.start(); err != nil {
		r.tb.Fatalf("testservice: restarting redis-server on %s: %v", r.Addr(), err)
	}
}

// redisPing sends an inline PING, the one command that needs no RESP
// encoding, and wants +PONG back.
func redisPing(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}
