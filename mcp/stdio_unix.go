//go:build unix

package mcp

import (
	"os"
	"syscall"
)

// stdioFiles returns the files ServeStdio reads and writes.
//
// Standard input is read with plain blocking reads. The reading goroutine
// runs most requests itself (streamread.go), so a blocking read costs no
// thread hand-off, and it is one system call per message where the
// network poller takes three (a read that finds nothing, epoll_wait, the
// read again): the echo benchmark's server CPU per sequential call fell
// by about a third. Standard output goes on the poller, so that a writer
// blocked by a slow client parks instead of holding a thread.
//
// When stdin and stdout are one socket, they share the file's
// non-blocking flag, so stdin goes on the poller as well: a blocking read
// of a descriptor made non-blocking would fail.
func stdioFiles() (in, out *os.File) {
	in, out = os.Stdin, os.Stdout
	var si, so syscall.Stat_t
	shared := syscall.Fstat(int(in.Fd()), &si) == nil && syscall.Fstat(int(out.Fd()), &so) == nil &&
		si.Dev == so.Dev && si.Ino == so.Ino
	if shared {
		in = pollable(in)
	}
	return in, pollable(out)
}

// pollable returns f reopened on Go's network poller when f is a pipe or a
// socket. Terminals and files are left alone: switching a terminal shared
// with a shell to non-blocking mode would break the shell.
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
