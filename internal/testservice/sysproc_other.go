//go:build !linux

package testservice

import "syscall"

// sysProcAttr runs a server as cred (when not nil), in its own process
// group so that a terminal's interrupt reaches the test first.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}
