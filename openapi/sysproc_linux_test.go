package openapi

import "syscall"

// sysProcAttr puts a child in its own process group (so that killing the
// group ends what it spawned) and has the kernel kill it if the test
// binary dies first, as it does when go test's -timeout panics.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
