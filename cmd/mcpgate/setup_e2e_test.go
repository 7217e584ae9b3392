package main

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's set-up, word for word, as a new user runs it in a fresh
// clone (CI runs the tests in one): `go run ./cmd/mcpgate serve` from the
// repository's root, then the curl sequence exactly as written, against
// 127.0.0.1:8765 itself, then Ctrl-C. Only the user's data directory is
// a temporary one, so the tasks land there.
func TestReadmeSetupWordForWord(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: go run compiles mcpgate again")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	if ln, err := net.Listen("tcp", "127.0.0.1:8765"); err != nil {
		t.Skipf("127.0.0.1:8765 is taken here (%v): the set-up serves there", err)
	} else {
		ln.Close()
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var setup, curl string
	for _, b := range readmeBlocks(t, string(readme)) {
		switch {
		case setup == "" && strings.Contains(b.text, "go run ./cmd/mcpgate serve"):
			setup = b.text
		case curl == "" && b.kind == "bash" && strings.Contains(b.text, "U=http://127.0.0.1:8765/mcp"):
			curl = b.text
		}
	}
	if setup == "" || curl == "" {
		t.Fatal("the README has no set-up block with `go run ./cmd/mcpgate serve`, or no curl block")
	}
	first := strings.TrimSpace(strings.SplitN(setup, "\n", 2)[0])
	first, _, _ = strings.Cut(first, "#") // the comment
	args := strings.Fields(first)
	if strings.Join(args, " ") != "go run ./cmd/mcpgate serve" {
		t.Fatalf("the set-up's first line is %q", first)
	}
	home := t.TempDir()
	env := append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(home, "data"), "HOME="+home,
		"MCPGATE_ADDR=", "MCPGATE_TASKS_DB=", "MCPGATE_CONFIG=", "GOFLAGS="+os.Getenv("GOFLAGS"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a bound on a hang, the compile included
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = "../.."
	cmd.Env = append(env, "GOCACHE="+goEnv(t, "GOCACHE"), "GOMODCACHE="+goEnv(t, "GOMODCACHE"), "GOPATH="+goEnv(t, "GOPATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // go run's child too
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	listening := make(chan string, 1)
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if u, ok := strings.CutPrefix(sc.Text(), "mcpgate is listening on "); ok {
				listening <- u
			}
		}
		close(listening)
	}()
	u, ok := <-listening
	if !ok || u != "http://127.0.0.1:8765/mcp" {
		t.Fatalf("go run ./cmd/mcpgate serve: listening on %q\n%s", u, log.String())
	}
	sh := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", curl)
	sh.Dir, sh.Env = home, env
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Errorf("the README's curl sequence: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "create_task") {
		t.Errorf("the curl sequence did not list the task tools:\n%s", out)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) // Ctrl-C
	if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "signal: interrupt") && !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("after Ctrl-C: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "data", "mcpgate", "tasks.db")); err != nil {
		t.Errorf("the tasks are not in the user's data directory: %v", err)
	}
}

func goEnv(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
