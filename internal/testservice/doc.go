// Package testservice starts real Redis, Postgres and HAProxy servers for
// tests: the Debian packages' binaries, each on a free loopback port with
// its files in a temporary directory, owned by the test and stopped by
// its cleanup. It never touches system services or their data.
//
// A test calls [Redis], [Postgres] or [HAProxy] and gets a running
// server; Stop, Start and Kill let it take the server away and bring it
// back on the same address, to test what clients do meanwhile. These
// methods call the test's Fatal on failure, so call them from the test's
// goroutine.
//
// # Missing binaries
//
// When a binary is not installed the test is skipped with the apt-get
// command that installs it; with MCPGATE_REQUIRE_SERVICES=1 in the
// environment (make test sets it) the test fails instead, so that CI
// never passes by skipping. scripts/ensure-deps.sh installs them all.
//
// It is for tests only.
package testservice
