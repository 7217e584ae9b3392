//go:build unix

package mcp

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ownGroup puts the server in a process group of its own, so that the
// signals of the stop sequence reach the processes it started (npx starts
// node, uvx starts python) and none is left behind.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func inOwnGroup(cmd *exec.Cmd) bool {
	return cmd.Process != nil && cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid && cmd.SysProcAttr.Pgid == 0
}

// signalGroup signals the server's process group, which outlives the
// server itself while a process it started lives on; the server alone
// when it has no group of its own.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	if inOwnGroup(cmd) && syscall.Kill(-cmd.Process.Pid, sig) == nil {
		return
	}
	cmd.Process.Signal(sig)
}

// groupAlive reports whether a live process of the server's group is
// left. The group's id is the server's pid, which the kernel does not
// reuse while the group has a member.
func groupAlive(cmd *exec.Cmd) bool {
	if !inOwnGroup(cmd) || syscall.Kill(-cmd.Process.Pid, 0) != nil {
		return false
	}
	if runtime.GOOS != "linux" {
		return true
	}
	// A zombie is a member too, until its parent reaps it: init, in a
	// container, may do so only every few seconds, or never.
	return liveMember(cmd.Process.Pid)
}

// liveMember reports whether /proc shows a process of group pgid that is
// not a zombie (or cannot be read).
func liveMember(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	want := strconv.Itoa(pgid)
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid pgrp ...", where comm may hold anything.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 3 && f[2] == want && f[0] != "Z" {
			return true
		}
	}
	return false
}

// reapGroup reaps the processes of the server's group that are our
// children: the server's orphans are, when this process is init (PID 1
// in a container) or a subreaper. Only after the server itself has been
// reaped, whose exit status cmd.Wait must get.
func reapGroup(cmd *exec.Cmd) {
	if !inOwnGroup(cmd) {
		return
	}
	for {
		var ws syscall.WaitStatus
		if pid, err := syscall.Wait4(-cmd.Process.Pid, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
			return
		}
	}
}

func terminate(cmd *exec.Cmd) { signalGroup(cmd, syscall.SIGTERM) }
func kill(cmd *exec.Cmd)      { signalGroup(cmd, syscall.SIGKILL) }

// wakeReader ends a read of f that waits for data.
func wakeReader(f *os.File) { f.SetReadDeadline(time.Now()) }

// readReady reads what f holds now, without waiting: io.EOF when it holds
// nothing. f is non-blocking (os.Pipe puts it on the poller), so a read
// of an empty pipe fails with EAGAIN rather than waiting.
func readReady(f *os.File, p []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			n, rerr = syscall.Read(int(fd), p)
			if rerr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return 0, err
	}
	switch {
	case rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK:
		return 0, io.EOF
	case rerr != nil:
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: rerr}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
