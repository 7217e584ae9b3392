//go:build unix && !linux

package openapi

import "syscall"

// sysProcAttr puts a child in its own process group, so that killing the
// group ends what it spawned.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
