package testservice

import (
	"net"
	"testing"
)

// freePort returns a loopback TCP port that nothing listened on a moment
// ago. Another process may take it before the server binds it, so a
// server's first start tries again with another port when it cannot
// bind (see [process.startOnFreePort]).
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testservice: finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
