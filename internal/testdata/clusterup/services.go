package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
)

// services lends internal/testservice, whose starters take a
// testing.TB and stop their servers in its cleanups, the parts of one
// that a program needs: temporary directories under one root, cleanups
// run by close, and a fatal error that unwinds to start (as
// interop/main_test.go adapts TestMain). Methods testservice does not
// call are left to the nil embedded TB: calling one panics, which start
// reports.
type services struct {
	testing.TB

	root string
	log  io.Writer

	mu       sync.Mutex
	n        int
	cleanups []func()
	failed   bool
}

// fatal is the panic value of a failed start, and missing that of a
// service whose program is not installed.
type (
	fatal   string
	missing string
)

func newServices(root string, log io.Writer) *services {
	return &services{root: root, log: log}
}

func (s *services) Helper()      {}
func (s *services) Name() string { return "clusterup" }

func (s *services) Cleanup(f func()) {
	s.mu.Lock()
	s.cleanups = append(s.cleanups, f)
	s.mu.Unlock()
}

func (s *services) TempDir() string {
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	dir := fmt.Sprintf("%s/svc%d", s.root, n)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.Fatalf("%v", err)
	}
	return dir
}

func (s *services) Logf(format string, args ...any) { fmt.Fprintf(s.log, format+"\n", args...) }
func (s *services) Log(args ...any)                 { fmt.Fprintln(s.log, args...) }

func (s *services) Failed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

func (s *services) Fatalf(format string, args ...any) { s.fail(fmt.Sprintf(format, args...)) }
func (s *services) Fatal(args ...any)                 { s.fail(fmt.Sprint(args...)) }
func (s *services) Errorf(format string, args ...any) { s.fail(fmt.Sprintf(format, args...)) }

// Skip is how testservice says a program is missing: here that ends the
// start, with its message (which names the package to install).
func (s *services) Skip(args ...any)                 { panic(missing(fmt.Sprint(args...))) }
func (s *services) Skipf(format string, args ...any) { panic(missing(fmt.Sprintf(format, args...))) }

func (s *services) fail(msg string) {
	s.mu.Lock()
	s.failed = true
	s.mu.Unlock()
	panic(fatal(msg))
}

// close runs the cleanups, last first.
func (s *services) close() {
	s.mu.Lock()
	cs := s.cleanups
	s.cleanups = nil
	s.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
}
