// Package testbin builds the helper programs under internal/testdata that
// tests run as real subprocesses, such as a tool server that skips the
// MCP lifecycle. It is for tests only.
package testbin

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// Build builds the main package pkg (an import path) into t's temporary
// directory and returns the program's path; it fails t if the build does.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// BareServer is the import path of a tool server written as templates
// write them: tools/list and tools/call, and -32601 for anything else,
// initialize and ping included.
const BareServer = "github.com/mcpgate/mcpgate/internal/testdata/bareserver"
