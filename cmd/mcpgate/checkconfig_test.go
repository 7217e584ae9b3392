package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCheckConfig runs the built binary, as a person would.
func runCheckConfig(t *testing.T, file string, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, "check-config", file)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func TestCheckConfigClaudeDesktop(t *testing.T) {
	file := filepath.Join("..", "..", "gateway", "config", "testdata", "claude_desktop_config.json")
	stdout, stderr, code := runCheckConfig(t, file)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		file + ": OK, 4 servers, 3 warnings\n",
		"  github      stdio  lazy  docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server; env: GITHUB_PERSONAL_ACCESS_TOKEN\n",
		`  filesystem  stdio  lazy  npx -y @modelcontextprotocol/server-filesystem 'C:\Users\ada\Desktop' /Users/ada/Downloads`,
		"builtins: none\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, file+`:2:3: warning: key "globalShortcut" ignored (hint: `) {
		t.Errorf("stderr:\n%s", stderr)
	}
	if strings.Contains(stdout+stderr, "ghp_example") {
		t.Errorf("a secret was printed:\n%s%s", stdout, stderr)
	}
}

func TestCheckConfigErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	src := `mcpServers:
  github:
    url: https://api.example.com/mcp
    headers:
      Authorization: Bearer ${GH_TOKEN}
    start: soon
  Local_Files:
    comand: npx
  remote:
    url: ftp://files.example.com
`
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCheckConfig(t, file, "GH_TOKEN=ghs-s3cret")
	want := file + `:6:12: start "soon" is not lazy or eager (hint: use "lazy" (start on first use) or "eager" (start at load))
` + file + `:7:3: server name "Local_Files" is not 1 to 32 of a-z, 0-9 and '-' starting with a letter (hint: rename it to "local-files")
` + file + `:8:5: unknown key "comand" (hint: did you mean "command"?)
` + file + `:10:10: url must start with http:// or https:// (hint: write an absolute URL such as https://example.com/mcp)
mcpgate: ` + file + `: 4 errors
`
	if code != 1 || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant:\n%s", code, stdout, stderr, want)
	}

	// Fixed, it passes, and the token stays hidden.
	src = strings.NewReplacer("start: soon", "start: lazy", "Local_Files", "local-files", "comand", "command", "ftp:", "https:").Replace(src)
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runCheckConfig(t, file, "GH_TOKEN=ghs-s3cret")
	if code != 0 || !strings.Contains(stdout, "  github       http   lazy   https://api.example.com/mcp; headers: Authorization\n") ||
		!strings.Contains(stdout, "  remote       http   eager  https://files.example.com\n") || stderr != "" {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "s3cret") {
		t.Errorf("the token was printed:\n%s", stdout)
	}
}

func TestCheckConfigMissingFile(t *testing.T) {
	_, stderr, code := runCheckConfig(t, filepath.Join(t.TempDir(), "nope.json"))
	if code != 1 || !strings.Contains(stderr, "no such file") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
