package config

// This file finds a stdio server's program before it is started: so that
// check-config warns about a command the gateway will not find (uv not
// installed, npxx), and so that the gateway, which starts the path found
// here, can say why a server cannot start rather than fail to spawn it
// at every retry.

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate/internal/redact"
)

// CommandError is why a stdio server's command cannot be started. Its
// message names the command and where it was looked for; the PATH
// directories are listed when PATH is the gateway's own, and only
// counted when the server's env sets it, since env values are not shown.
type CommandError struct {
	// Command is the server's command as configured.
	Command string
	// Resolved is the file the command named, for a command with a
	// directory ("./bin/server" taken from cwd) or found through a
	// relative PATH directory; empty otherwise.
	Resolved string
	// Cwd is set when the server's working directory is what is wrong.
	Cwd string
	// Dirs are the PATH directories searched for a command without a
	// directory, in order, each once.
	Dirs []string
	// EnvPath is set when PATH came from the server's env.
	EnvPath bool
	// Err is exec.ErrNotFound (not in PATH), exec.ErrDot (only in a
	// relative PATH directory), fs.ErrNotExist (no such file or cwd),
	// fs.ErrPermission (not executable), errIsDir, or errNoCommand.
	Err error
}

var (
	errNoCommand = errors.New("no command")
	errIsDir     = errors.New("is a directory")
)

func (e *CommandError) Error() string {
	cmd := strconv.Quote(e.Command)
	at := ""
	if e.Resolved != "" && e.Resolved != e.Command {
		at = " (" + e.Resolved + ")"
	}
	switch {
	case e.Err == errNoCommand:
		return "the server has no command"
	case e.Cwd != "" && e.Err == errIsDir:
		return fmt.Sprintf("cwd %q is not a directory, so command %s cannot start in it", e.Cwd, cmd)
	case e.Cwd != "":
		return fmt.Sprintf("cwd %q does not exist, so command %s cannot start in it", e.Cwd, cmd)
	case errors.Is(e.Err, exec.ErrDot):
		return fmt.Sprintf("command %s is found only through a relative PATH directory%s, which the gateway does not run from", cmd, at)
	case errors.Is(e.Err, exec.ErrNotFound) && len(e.Dirs) == 0:
		return fmt.Sprintf("command %s not found: PATH is empty", cmd)
	case errors.Is(e.Err, exec.ErrNotFound) && e.EnvPath:
		dirs := "directories"
		if len(e.Dirs) == 1 {
			dirs = "directory"
		}
		return fmt.Sprintf("command %s not found in the PATH that the server's env sets (%d %s)", cmd, len(e.Dirs), dirs)
	case errors.Is(e.Err, exec.ErrNotFound):
		return fmt.Sprintf("command %s not found in PATH (searched %s)", cmd, strings.Join(e.Dirs, ", "))
	case errors.Is(e.Err, fs.ErrNotExist):
		return fmt.Sprintf("command %s%s does not exist", cmd, at)
	case e.Err == errIsDir:
		return fmt.Sprintf("command %s%s is a directory, not a program", cmd, at)
	case errors.Is(e.Err, fs.ErrPermission):
		return fmt.Sprintf("command %s%s is not executable", cmd, at)
	}
	return fmt.Sprintf("command %s%s: %v", cmd, at, e.Err)
}

func (e *CommandError) Unwrap() error { return e.Err }

// LookCommand returns the absolute path of the program s.Command names,
// found as the gateway starts it. A command without a directory ("npx")
// is looked up in PATH with exec.LookPath's rules (PATHEXT on Windows,
// and a program found only through a relative PATH directory is refused,
// as exec.ErrDot); that PATH is the one s.Env sets, if it does, as Node's
// spawn in Claude Desktop reads it, else the gateway's own. A relative
// command with a directory ("./bin/server") is taken from s.Cwd, as
// exec.Cmd takes a relative Path from Dir. An absolute command that
// exists and is executable is returned as it is.
//
// The gateway starts the path returned, so that this check and the start
// agree. The error is a *CommandError; the server is not started.
func (s *Server) LookCommand() (string, error) {
	e := &CommandError{Command: s.Command}
	if s.Command == "" {
		e.Err = errNoCommand
		return "", e
	}
	if s.Cwd != "" {
		if fi, err := os.Stat(s.Cwd); err != nil || !fi.IsDir() {
			e.Cwd, e.Err = s.Cwd, cmp.Or(err, errIsDir)
			return "", e
		}
	}
	if filepath.Base(s.Command) != s.Command { // a path, not a name
		p := s.Command
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.Cwd, p)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			e.Err = err
			return "", e
		}
		e.Resolved = abs
		found, err := exec.LookPath(abs)
		if err != nil {
			e.Err = fileProblem(abs, err)
			return "", e
		}
		return found, nil
	}
	path, fromEnv := s.pathList()
	for _, dir := range filepath.SplitList(path) {
		if !slices.Contains(e.Dirs, dir) { // a second look finds nothing new
			e.Dirs = append(e.Dirs, dir)
		}
	}
	e.EnvPath = fromEnv
	for _, dir := range e.Dirs {
		// A path with a separator is checked as it is, never searched:
		// exec.LookPath's own rules for the file (mode, PATHEXT).
		found, err := exec.LookPath(cmp.Or(dir, ".") + string(os.PathSeparator) + s.Command)
		if err != nil {
			continue
		}
		if !filepath.IsAbs(found) {
			e.Resolved, e.Err = found, exec.ErrDot
			return "", e
		}
		return filepath.Clean(found), nil
	}
	e.Err = exec.ErrNotFound
	return "", e
}

// pathList is the PATH the command is looked up in.
func (s *Server) pathList() (path string, fromEnv bool) {
	for k, v := range s.Env {
		if k == "PATH" || runtime.GOOS == "windows" && strings.EqualFold(k, "PATH") {
			return v, true
		}
	}
	return os.Getenv("PATH"), false
}

// fileProblem says what is wrong with a file exec.LookPath refused.
func fileProblem(path string, err error) error {
	fi, serr := os.Stat(path)
	switch {
	case serr != nil:
		return serr
	case fi.IsDir():
		return errIsDir
	case errors.Is(err, fs.ErrPermission):
		return fs.ErrPermission
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

// installs are where to get the programs config files most often name.
var installs = map[string]string{
	"uv":     "install uv (https://docs.astral.sh/uv/)",
	"uvx":    "install uv, which has uvx (https://docs.astral.sh/uv/)",
	"npx":    "install Node.js, which has npx (https://nodejs.org)",
	"node":   "install Node.js (https://nodejs.org)",
	"npm":    "install Node.js, which has npm (https://nodejs.org)",
	"docker": "install Docker (https://docs.docker.com/get-docker/)",
	"bunx":   "install Bun, which has bunx (https://bun.sh)",
	"deno":   "install Deno (https://deno.com)",
}

// LookCommands runs [Server.LookCommand] for each enabled stdio server and
// returns a warning for each that would not start, in file order, at its
// command. They are warnings, not errors: the gateway may run with another
// PATH than this process (a client starts it with its own) and the program
// may be installed by then. Like every [Diagnostic] they hold no secret:
// what came from a variable shows as [redacted].
func (c *Config) LookCommands() []*Diagnostic {
	var out []*Diagnostic
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		s := c.Servers[name]
		if s == nil || s.Disabled || s.Command == "" {
			continue
		}
		look := s
		if instanceVarIn(s.Cwd) != "" {
			// The gateway makes each instance's directory as it starts it.
			c := *s
			c.Cwd = ""
			look = &c
		}
		_, err := look.LookCommand()
		var e *CommandError
		if !errors.As(err, &e) {
			continue
		}
		hint := commandHint(e)
		shown := *e
		shown.Command = redact.String(c.hide(s.Command))
		if c.src.fromEnv(s.Command) || c.src.fromEnv(s.Cwd) {
			shown.Resolved = ""
		}
		shown.Cwd = c.hide(e.Cwd)
		file := ""
		if c.src != nil {
			file = c.src.file
		}
		p := []string{"mcpServers", name, "command"}
		if e.Cwd != "" {
			p[2] = "cwd"
		}
		out = append(out, &Diagnostic{File: file, Pos: c.src.at(p...), Msg: shown.Error(), Hint: hint})
	}
	sortDiags(out)
	return out
}

func commandHint(e *CommandError) string {
	switch {
	case e.Cwd != "":
		return "create the directory, or correct cwd"
	case errors.Is(e.Err, exec.ErrDot):
		return "write the program's absolute path, or make the PATH directory absolute"
	case errors.Is(e.Err, exec.ErrNotFound):
		if how, ok := installs[e.Command]; ok {
			return how + ", or write the program's absolute path"
		}
		if near, dir, ok := nearProgram(e.Command, e.Dirs); ok {
			return fmt.Sprintf("did you mean %q (in %s)?", near, dir)
		}
		return "install it, or write the program's absolute path (`command -v NAME` in a shell that finds it)"
	case errors.Is(e.Err, fs.ErrNotExist) && !filepath.IsAbs(e.Command):
		return "a relative command is taken from cwd (or the gateway's working directory): check the path, or write it absolute"
	case errors.Is(e.Err, fs.ErrNotExist):
		return "check the path"
	case e.Err == errIsDir:
		return "name the program in the directory, not the directory"
	case errors.Is(e.Err, fs.ErrPermission):
		return `make it executable (chmod +x), or run it with its interpreter: "command": "node", "args": ["path/to/it.js"]`
	}
	return "check the command"
}

// nearProgram is a program in dirs whose name is a near miss of name
// ("npx" for "npxx"). Names shorter than three are not guessed at: too
// many programs are a letter away.
func nearProgram(name string, dirs []string) (near, dir string, ok bool) {
	if len(name) < 3 {
		return "", "", false
	}
	where := map[string]string{}
	var names []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		entries, _ := os.ReadDir(d)
		for _, ent := range entries {
			n := ent.Name()
			if runtime.GOOS == "windows" {
				n = strings.TrimSuffix(n, filepath.Ext(n))
			}
			if _, seen := where[n]; !seen && !ent.IsDir() {
				where[n] = d
				names = append(names, n)
			}
		}
	}
	if near, ok = suggest(name, names); !ok || near == name {
		return "", "", false
	}
	return near, where[near], true
}
