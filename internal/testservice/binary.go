package testservice

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// RequireEnv is the environment variable that turns a missing binary
// from a skipped test into a failed one.
const RequireEnv = "MCPGATE_REQUIRE_SERVICES"

// binary returns the path of the program name from the Debian package
// pkg, looking on PATH and then in the extra directories; when it is in
// none of them the test is skipped, or failed under RequireEnv.
func binary(tb testing.TB, name, pkg string, extra ...string) string {
	tb.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range extra {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	msg, fatal := missing(name, pkg, os.Getenv(RequireEnv))
	if fatal {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}

// missing words the message for a program that is not installed, and
// says whether the test must fail rather than skip.
func missing(name, pkg, require string) (msg string, fatal bool) {
	msg = fmt.Sprintf("testservice: %s is not installed; install it with `apt-get install -y %s` (or run scripts/ensure-deps.sh)", name, pkg)
	if require == "1" {
		return msg + " (" + RequireEnv + "=1 makes this a failure)", true
	}
	return msg, false
}

// postgresBinDirs lists Debian's per-version directories of the Postgres
// server programs, newest first: Debian keeps initdb and postgres off
// PATH, under /usr/lib/postgresql/VERSION/bin.
func postgresBinDirs(root string) []string {
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "bin"))
	version := func(dir string) int {
		v, _ := strconv.Atoi(strings.SplitN(filepath.Base(filepath.Dir(dir)), ".", 2)[0])
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	return dirs
}
