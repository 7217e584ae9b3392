package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A proc is a server process the driver started, in a process group of
// its own so that it (and anything it starts) can be ended by its id.
type proc struct {
	name   string
	cmd    *exec.Cmd
	pid    int
	done   chan struct{} // closed when the process has exited
	stdin  *os.File      // the parent's end of the server's stdin (stdio servers)
	stdout *os.File      // the parent's end of the server's stdout (stdio servers)
	start  time.Time     // just before the fork
}

// spawn starts argv. A stdio server gets pipes for stdin and stdout; any
// other gets /dev/null for stdin and logf for stdout, or /dev/null when
// quiet (a server that logs every request there). Stderr goes to logf.
func spawn(name string, argv, env []string, stdio, quiet bool, logf *os.File) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = logf
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	var childIn, childOut *os.File
	if stdio {
		var err error
		if childIn, p.stdin, err = os.Pipe(); err != nil {
			return nil, err
		}
		if p.stdout, childOut, err = os.Pipe(); err != nil {
			childIn.Close()
			p.stdin.Close()
			return nil, err
		}
		cmd.Stdin, cmd.Stdout = childIn, childOut
	} else {
		if !quiet {
			cmd.Stdout = logf
		}
	}
	p.start = time.Now()
	err := cmd.Start()
	if childIn != nil {
		childIn.Close()
		childOut.Close()
	}
	if err != nil {
		if p.stdin != nil {
			p.stdin.Close()
			p.stdout.Close()
		}
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p.pid = cmd.Process.Pid
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the process: end of input first (stdio servers stop by
// themselves then), then SIGTERM, then SIGKILL, each to the process group
// this driver created for it.
func (p *proc) stop() {
	if p.stdin != nil {
		p.stdin.Close()
		if p.wait(2 * time.Second) {
			p.stdout.Close()
			return
		}
	}
	syscall.Kill(-p.pid, syscall.SIGTERM)
	if !p.wait(3 * time.Second) {
		syscall.Kill(-p.pid, syscall.SIGKILL)
		p.wait(5 * time.Second)
	}
	if p.stdout != nil {
		p.stdout.Close()
	}
}

func (p *proc) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// cpuSample is a process's CPU time so far, two ways: the sum of its
// threads' on-CPU nanoseconds (/proc/PID/task/*/schedstat, precise, but a
// thread that exits takes its time with it) and utime+stime of
// /proc/PID/stat (every thread, dead ones included, in clock ticks).
type cpuSample struct {
	ns    int64
	ticks int64
	tids  map[string]bool
}

// clockTick is USER_HZ, 100 on every Linux the driver is meant for.
const clockTick = 10 * time.Millisecond

func readCPU(pid int) (cpuSample, error) {
	s := cpuSample{tids: map[string]bool{}}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return s, errors.New("unreadable /proc stat")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return s, errors.New("short /proc stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	s.ticks = ut + st
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue // the thread just ended
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, _ := strconv.ParseInt(f[0], 10, 64)
		s.ns += ns
		s.tids[filepath.Base(filepath.Dir(d))] = true
	}
	return s, nil
}

// cpuPer is the CPU time spent between two samples per request, in
// microseconds, and which clock it came from: the threads' nanoseconds
// unless a thread present before is gone after (its time would be lost),
// then the ticks.
// measureCPU runs f, a phase that fills rec, and records the CPU per
// request that the server (pid) and the driver itself spent meanwhile.
func measureCPU(rec *record, pid int, f func()) {
	srv0, _ := readCPU(pid)
	drv0, _ := readCPU(os.Getpid())
	f()
	srv1, _ := readCPU(pid)
	drv1, _ := readCPU(os.Getpid())
	n := rec.OK + rec.errorCount()
	rec.CPUUsPer, rec.CPUSource = cpuPer(srv0, srv1, n)
	rec.DriverCPUUsPer, _ = cpuPer(drv0, drv1, n)
}

func cpuPer(a, b cpuSample, n int) (float64, string) {
	if n <= 0 {
		return 0, ""
	}
	for t := range a.tids {
		if !b.tids[t] {
			return float64(b.ticks-a.ticks) * float64(clockTick.Microseconds()) / float64(n), "ticks"
		}
	}
	return float64(b.ns-a.ns) / 1e3 / float64(n), "schedstat"
}

// procStatusKB reads a field of /proc/PID/status in kB (VmHWM, VmRSS).
func procStatusKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v
			}
		}
	}
	return 0
}

// freePort asks the kernel for a free port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits until 127.0.0.1:port accepts connections, the
// process exits, or limit passes.
func waitListening(p *proc, port int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("%s exited before listening", p.name)
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s did not listen on %s within %v", p.name, addr, limit)
}
