package testservice

import "syscall"

// sysProcAttr runs a server as cred (when not nil) and has the kernel
// kill it when the test process dies, so that a test killed by its
// timeout or by a signal leaves no server behind. Its own process group
// keeps a terminal's interrupt from reaching it before the test's
// cleanup does.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
