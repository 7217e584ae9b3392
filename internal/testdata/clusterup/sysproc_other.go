//go:build !linux

package main

import "syscall"

// sysProcAttr puts a replica in a process group of its own, so that stop
// reaches anything it started.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
