//go:build unix

package mcp

import (
	"os"
	"syscall"
)

// pollable returns f reopened on Go's network poller when f is a pipe or a
// socket. A blocking read of stdin holds an OS thread, so every request
// handed to another goroutine costs a thread wake-up; on the poller the
// reading goroutine parks instead and the handler runs at once. Terminals
// and files are left alone: switching a terminal shared with a shell to
// non-blocking mode would break the shell.
func pollable(f *os.File) *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return f
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFIFO && st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
		return f
	}
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return f
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}
