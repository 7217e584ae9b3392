//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

// Outside unix the server has no process group of its own: the stop
// sequence reaches the server process alone.
func ownGroup(*exec.Cmd) {}

func groupAlive(*exec.Cmd) bool { return false }

func reapGroup(*exec.Cmd) {}

func terminate(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill() // no SIGTERM outside unix
	}
}

func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// Pipes are not on a poller outside unix: reads wait for the pipe's end,
// which the stop sequence brings by closing it after TerminateTimeout.
func wakeReader(*os.File) {}

func readReady(f *os.File, p []byte) (int, error) { return f.Read(p) }
