//go:build unix && !linux

package interop

import "syscall"

// sysProcAttr puts a child in its own process group, so that stopping it
// ends what it spawned.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
