package openapi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// requireServices is internal/testservice's RequireEnv, written out: that
// package does not build on Windows, and these tests do.
const requireServices = "MCPGATE_REQUIRE_SERVICES"

// npmModules is where testdata/npm/install.sh (run by make deps) installs
// the pinned npm packages these tests use: Prism, the APIs.guru
// collection and GitHub's description (testdata/npm/package-lock.json).
const npmModules = "testdata/npm/node_modules"

// npmInstalled returns the path of rel, a path inside npmModules. When it
// is not there the test is skipped, or failed under
// MCPGATE_REQUIRE_SERVICES=1 as make test sets, so that CI never passes
// by skipping.
func npmInstalled(tb testing.TB, rel string) string {
	tb.Helper()
	p := filepath.Join(npmModules, filepath.FromSlash(rel))
	_, err := os.Stat(p)
	if err == nil {
		return p
	}
	notInstalled(tb, fmt.Sprintf("%s is not installed (%v): run openapi/testdata/npm/install.sh, which make deps runs", rel, err))
	return ""
}

// needNode skips or fails the test, as npmInstalled does, when node is
// not on PATH: Prism is a Node program.
func needNode(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		notInstalled(tb, "node is not installed: install Node 20 or later with npm")
	}
}

func notInstalled(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv(requireServices) == "1" {
		tb.Fatalf("%s (%s=1 makes this a failure)", msg, requireServices)
	}
	tb.Skip(msg)
}
