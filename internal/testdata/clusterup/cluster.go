package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/internal/testservice"
)

// waitFor bounds each wait: for a replica to answer, for one to exit.
const waitFor = 20 * time.Second // a bound on a hang

// cluster is what start started, for close to stop.
type cluster struct {
	log      io.Writer
	root     string
	svc      *services
	replicas []*replica
}

func newCluster(log io.Writer) *cluster {
	return &cluster{log: &lockedWriter{w: log}}
}

// start starts Redis, the replicas, then HAProxy, and prints where they
// are. A failure leaves what was started for close.
func (c *cluster) start(cfg config) (err error) {
	root, err := os.MkdirTemp("", "clusterup-")
	if err != nil {
		return err
	}
	c.root = root
	c.svc = newServices(root, c.log)
	defer func() {
		// testservice reports a failure through the TB's Fatal.
		switch v := recover().(type) {
		case nil:
		case fatal:
			err = errors.New(string(v))
		case missing:
			err = &missingError{string(v)}
		default:
			panic(v)
		}
	}()
	vars := map[string]string{"dir": root}
	if cfg.redis {
		r := testservice.Redis(c.svc)
		vars["redis"] = r.URL()
		fmt.Fprintf(c.log, "cluster redis %s\n", r.URL())
	}
	if cfg.postgres {
		p := testservice.Postgres(c.svc)
		vars["postgres"] = p.URL()
		fmt.Fprintf(c.log, "cluster postgres %s\n", p.URL())
	}
	var backends []string
	for i := 1; i <= cfg.n; i++ {
		vars["i"] = strconv.Itoa(i)
		r, err := startReplica(i, cfg, vars, c.log)
		if r != nil {
			c.replicas = append(c.replicas, r)
		}
		if err != nil {
			return err
		}
		backends = append(backends, r.addr)
		fmt.Fprintf(c.log, "cluster replica %d pid %d http://%s%s\n", i, r.cmd.Process.Pid, r.addr, cfg.path)
	}
	// MaxConn: the default needs more descriptors than some machines
	// allow (ulimit -n 20000), and a test cluster needs few.
	h := testservice.HAProxy(c.svc, backends, &testservice.HAProxyOptions{MaxConn: 4096})
	front := h.URL() + cfg.path
	if err := answers(front, nil); err != nil {
		return fmt.Errorf("HAProxy on %s: %w", h.Addr(), err)
	}
	fmt.Fprintf(c.log, "cluster front %s\n", front)
	return nil
}

// missingError is a start that failed for want of a program (redis-server,
// haproxy, postgres): run exits with exitMissing, so that a caller can
// skip rather than fail.
type missingError struct{ msg string }

func (e *missingError) Error() string { return e.msg }

// close stops the replicas (SIGTERM, in parallel, so that they drain
// together), then HAProxy and Redis, and removes the files.
func (c *cluster) close() {
	var wg sync.WaitGroup
	for _, r := range c.replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.stop()
		}()
	}
	wg.Wait()
	if c.svc != nil {
		c.svc.close()
	}
	if c.root != "" {
		os.RemoveAll(c.root)
	}
}

// replica is one process of the command under test.
type replica struct {
	cmd      *exec.Cmd
	addr     string
	exited   chan struct{}
	stopping atomic.Bool // an exit now is ours, not news
}

// startReplica starts replica i on a free port and waits until it
// answers HTTP. A port that another process took meanwhile makes the
// replica exit; it is tried again on another, a few times.
func startReplica(i int, cfg config, vars map[string]string, log io.Writer) (*replica, error) {
	var errs []error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		vars["port"] = strconv.Itoa(port)
		args := expand(cfg.command, vars)
		r := &replica{addr: net.JoinHostPort("127.0.0.1", vars["port"]), exited: make(chan struct{})}
		r.cmd = exec.Command(args[0], args[1:]...)
		out := &prefixWriter{w: log, prefix: fmt.Sprintf("replica %d: ", i)}
		r.cmd.Stdout, r.cmd.Stderr = out, out
		r.cmd.SysProcAttr = sysProcAttr()
		if err := r.cmd.Start(); err != nil {
			return nil, fmt.Errorf("replica %d: %w", i, err)
		}
		go func() {
			err := r.cmd.Wait()
			if !r.stopping.Load() {
				// A test may kill a replica on purpose; its script
				// learns of it here.
				fmt.Fprintf(log, "cluster replica %d pid %d exited: %v\n", i, r.cmd.Process.Pid, err)
			}
			close(r.exited)
		}()
		err = answers("http://"+r.addr+cfg.path, r.exited)
		if err == nil {
			return r, nil
		}
		r.stop()
		errs = append(errs, fmt.Errorf("replica %d on port %d: %w", i, port, err))
	}
	return nil, errors.Join(errs...)
}

// stop sends SIGTERM to the replica's process group, and SIGKILL when it
// has not exited within waitFor.
func (r *replica) stop() {
	r.stopping.Store(true)
	pid := r.cmd.Process.Pid
	syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-r.exited:
		return
	case <-time.After(waitFor):
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	<-r.exited
}

// answers waits until url answers an HTTP GET with any status (an MCP
// endpoint answers 400 or 405 to a bare GET), or exited is closed.
func answers(url string, exited <-chan struct{}) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(waitFor)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer at %s within %v: %w", url, waitFor, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("it exited before it answered at %s", url)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
