//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup puts the server in a process group of its own, so that the
// signals of Close reach the processes it started (npx starts node, uvx
// starts python) and none is left behind.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
		if syscall.Kill(-cmd.Process.Pid, sig) == nil {
			return
		}
	}
	cmd.Process.Signal(sig)
}

func terminate(cmd *exec.Cmd) { signalGroup(cmd, syscall.SIGTERM) }
func kill(cmd *exec.Cmd)      { signalGroup(cmd, syscall.SIGKILL) }
