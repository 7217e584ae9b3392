package config

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// programs makes a directory holding executable scripts of names, a
// file that is not executable ("data") and a directory ("sub").
func programs(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "data"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLookCommand finds a server's program as the gateway starts it, and
// says why it cannot when it cannot: the command, and the PATH searched.
func TestLookCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the cases use execute bits and ':' in PATH")
	}
	bin, other := programs(t, "srv"), programs(t, "npx")
	t.Setenv("PATH", other+":"+bin+":"+other)
	t.Chdir(filepath.Dir(bin)) // so that a relative PATH directory finds srv
	for _, tc := range []struct {
		name string
		s    Server
		path string // want found; "" when an error is wanted
		err  error  // errors.Is
		msg  string // the whole message
	}{
		{"in the gateway's PATH", Server{Command: "srv"}, bin + "/srv", nil, ""},
		{"in env's PATH first", Server{Command: "npx", Env: map[string]string{"PATH": bin + ":" + other}}, other + "/npx", nil, ""},
		{"absolute", Server{Command: bin + "/srv"}, bin + "/srv", nil, ""},
		{"relative to cwd", Server{Command: "./srv", Cwd: bin}, bin + "/srv", nil, ""},
		{"relative to the working directory", Server{Command: filepath.Base(bin) + "/srv"}, bin + "/srv", nil, ""},
		{"not in PATH", Server{Command: "npxx"}, "", exec.ErrNotFound,
			`command "npxx" not found in PATH (searched ` + other + ", " + bin + ")"},
		{"not in env's PATH, not listed", Server{Command: "uv", Env: map[string]string{"PATH": bin + ":/nowhere"}}, "", exec.ErrNotFound,
			`command "uv" not found in the PATH that the server's env sets (2 directories)`},
		{"empty PATH", Server{Command: "srv", Env: map[string]string{"PATH": ""}}, "", exec.ErrNotFound,
			`command "srv" not found: PATH is empty`},
		{"only in a relative PATH directory", Server{Command: "srv", Env: map[string]string{"PATH": filepath.Base(bin)}}, "", exec.ErrDot,
			`command "srv" is found only through a relative PATH directory (` + filepath.Base(bin) + `/srv), which the gateway does not run from`},
		{"no such file", Server{Command: "./nope", Cwd: bin}, "", fs.ErrNotExist,
			`command "./nope" (` + bin + `/nope) does not exist`},
		{"not executable", Server{Command: bin + "/data"}, "", fs.ErrPermission,
			`command "` + bin + `/data" is not executable`},
		{"a directory", Server{Command: bin + "/sub"}, "", errIsDir,
			`command "` + bin + `/sub" is a directory, not a program`},
		{"cwd missing", Server{Command: "srv", Cwd: bin + "/gone"}, "", fs.ErrNotExist,
			`cwd "` + bin + `/gone" does not exist, so command "srv" cannot start in it`},
		{"cwd a file", Server{Command: "srv", Cwd: bin + "/data"}, "", errIsDir,
			`cwd "` + bin + `/data" is not a directory, so command "srv" cannot start in it`},
		{"no command", Server{URL: "https://h/mcp"}, "", errNoCommand, "the server has no command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.s.LookCommand()
			var ce *CommandError
			switch {
			case tc.err == nil && (err != nil || got != tc.path):
				t.Errorf("got %q, %v; want %q", got, err, tc.path)
			case tc.err != nil && (got != "" || !errors.Is(err, tc.err) || !errors.As(err, &ce) || err.Error() != tc.msg):
				t.Errorf("got %q, %v\nwant error %v:\n%s", got, err, tc.err, tc.msg)
			}
		})
	}
}

// TestLookCommandsWarn: check-config's warnings point at the command,
// suggest the program meant or where to get it, leave disabled servers
// alone, and never show what came from a variable.
func TestLookCommandsWarn(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the cases use execute bits and ':' in PATH")
	}
	bin := programs(t, "npx", "srv")
	t.Setenv("PATH", bin)
	src := `{"mcpServers": {
  "typo": {"command": »"npxx", "args": ["-y", "x"]},
  "python": {"command": »"uvx"},
  "ok": {"command": "srv"},
  "off": {"command": "gone", "disabled": true},
  "remote": {"url": "https://h/mcp"},
  "secret": {"command": »"${BIN}/tool"},
  "rel": {"command": "./x", "cwd": »"/nonexistent-dir"}
}}`
	src, at := markers(src)
	c, err := Parse([]byte(src), "c.json", env("BIN", "/opt/s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`command "npxx" not found in PATH (searched ` + bin + `) (hint: did you mean "npx" (in ` + bin + `)?)`,
		`command "uvx" not found in PATH (searched ` + bin + `) (hint: install uv, which has uvx (https://docs.astral.sh/uv/), or write the program's absolute path)`,
		`command "[redacted]/tool" does not exist (hint: check the path)`,
		`cwd "/nonexistent-dir" does not exist, so command "./x" cannot start in it (hint: create the directory, or correct cwd)`,
	}
	got := c.LookCommands()
	if len(got) != len(want) {
		t.Fatalf("got %d warnings, want %d:\n%v", len(got), len(want), Errors(got))
	}
	for i, d := range got {
		if d.File != "c.json" || d.Pos != at[i] || d.Msg+" (hint: "+d.Hint+")" != want[i] {
			t.Errorf("warning %d:\ngot  %v\nwant c.json:%d:%d: %s", i, d, at[i].Line, at[i].Col, want[i])
		}
		if strings.Contains(d.Error(), "s3cret") {
			t.Errorf("warning %d shows a variable's value: %v", i, d)
		}
	}
}
