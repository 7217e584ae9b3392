package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

func main() {
	// MCPGATE_CPUPROFILE=PREFIX writes a CPU profile of the whole run to
	// PREFIX.PID, for finding where a request's time goes in the real
	// process (benchmarks start several).
	if prefix := os.Getenv("MCPGATE_CPUPROFILE"); prefix != "" {
		if f, err := os.Create(fmt.Sprintf("%s.%d", prefix, os.Getpid())); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgate:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}
