package main

import "syscall"

// sysProcAttr puts a replica in a process group of its own, so that stop
// reaches anything it started, and has the kernel stop it when clusterup
// dies without cleaning up (SIGKILL).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
