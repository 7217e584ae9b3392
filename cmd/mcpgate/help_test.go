package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpgate/mcpgate/mcp"
)

// What a new user reads first: the help screens, the version, and the
// messages of a mistyped target.

// allCommands walks the command tree that main runs.
func allCommands() []*cobra.Command {
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		out = append(out, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	return out
}

func TestFirstHelpScreenSaysWhatMcpgateIs(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		words []string
	}{
		{[]string{"--help"}, []string{"gateway", "serve --config FILE", "Claude Desktop config", "task store", "Go library", "check-config"}},
		// The one-line description in the command list.
		{[]string{"--help"}, []string{"Serve MCP: a gateway for the servers of --config, or the built-in task tools"}},
		{[]string{"serve", "--help"}, []string{"With --config FILE, mcpgate is a gateway", "review_tasks", "tasks://open"}},
	} {
		out := ok(t, tt.args)
		for _, w := range tt.words {
			if !strings.Contains(out, w) {
				t.Errorf("mcpgate %s lacks %q:\n%s", strings.Join(tt.args, " "), w, out)
			}
		}
	}
}

// pflag takes the first back-quoted word of a usage string as the name
// of the flag's value: "made with `mcpgate auth new-key`" showed as
// "--auth-keys mcpgate auth new-key".
func TestFlagUsagesHaveNoBackQuotesAndNameRealFlags(t *testing.T) {
	flagRef := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	for _, c := range allCommands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			where := c.CommandPath() + " --" + f.Name
			if strings.Contains(f.Usage, "`") {
				name, _ := pflag.UnquoteUsage(f)
				t.Errorf("%s: its usage has back quotes, so help shows its value as %q: %s", where, name, f.Usage)
			}
			for _, m := range flagRef.FindAllStringSubmatch(f.Usage, -1) {
				if c.Flags().Lookup(m[1]) == nil && c.InheritedFlags().Lookup(m[1]) == nil {
					t.Errorf("%s: its usage names --%s, which %s does not have: %s", where, m[1], c.CommandPath(), f.Usage)
				}
			}
		})
	}
	out := ok(t, "serve", "--help")
	for _, want := range []string{"--auth-keys string ", "--auth-users string "} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, out)
		}
	}
}

func TestConformanceCommandsAreHiddenButWork(t *testing.T) {
	out := ok(t, "--help")
	if strings.Contains(out, "conformance") {
		t.Errorf("mcpgate --help lists the conformance commands:\n%s", out)
	}
	for _, name := range []string{"conformance-server", "conformance-client"} {
		if out := ok(t, name, "--help"); !strings.Contains(out, "conformance") {
			t.Errorf("%s --help:\n%s", name, out)
		}
	}
}

// One list of revisions, newest first, wherever a person reads one.
func TestRevisionsAreListedNewestFirstEverywhere(t *testing.T) {
	want := strings.Join(mcp.Versions(), ", ")
	if !strings.HasPrefix(want, mcp.Version20260728+", "+mcp.LatestNegotiatedVersion) {
		t.Fatalf("mcp.Versions() = %s: not newest first", want)
	}
	out := ok(t, "version")
	if !strings.Contains(out, "protocol revisions: "+want+"\n") {
		t.Errorf("mcpgate version:\n%s\nwant the revisions %s", out, want)
	}
	for _, args := range [][]string{{"ping", "--help"}, {"tools", "call", "--help"}} {
		if out := ok(t, args); !strings.Contains(out, "one of "+want) {
			t.Errorf("mcpgate %s: --protocol-version does not list %s:\n%s", strings.Join(args, " "), want, out)
		}
	}
	fails(t, []string{`--protocol-version "2024-01-01": use auto or one of ` + want}, "ping", "--protocol-version", "2024-01-01", "http://127.0.0.1:9/mcp")
}

func TestVersionFlagPrintsWhatVersionPrints(t *testing.T) {
	first, _, _ := strings.Cut(ok(t, "version"), "\n")
	if out := ok(t, "--version"); out != first+"\n" {
		t.Errorf("mcpgate --version = %q, want %q (the first line of mcpgate version)", out, first+"\n")
	}
}

// make build stamps the version from git: the command it runs, run here
// with another output file, gives a binary whose version is git's.
func TestMakeBuildStampsTheVersionFromGit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary again")
	}
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	describe, err := exec.Command("git", "-C", root, "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): make build has nothing to stamp", err)
	}
	dry := exec.Command("make", "-s", "-n", "build")
	dry.Dir = root
	line, err := dry.Output()
	if err != nil {
		t.Fatalf("make -n build: %v", err)
	}
	build := strings.TrimSpace(string(line))
	bin := filepath.Join(t.TempDir(), "mcpgate")
	if !strings.Contains(build, "-X main.version=") || !strings.Contains(build, " -o bin/mcpgate ") {
		t.Fatalf("make build runs %q: want -ldflags \"-X main.version=...\" and -o bin/mcpgate", build)
	}
	run := exec.Command("sh", "-c", strings.Replace(build, " -o bin/mcpgate ", " -o "+bin+" ", 1))
	run.Dir = root
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The tree may change between the two git calls (-dirty): compare the
	// commit part.
	want, _, _ := strings.Cut(strings.TrimSpace(string(describe)), "-dirty")
	if !strings.HasPrefix(string(out), "mcpgate "+want) || strings.HasPrefix(string(out), "mcpgate dev") {
		t.Errorf("a make build binary says %q, want mcpgate %s", out, want)
	}
	if out, _ := exec.Command(bin, "--version").Output(); !strings.HasPrefix(string(out), "mcpgate "+want) {
		t.Errorf("--version of a make build binary: %q", out)
	}
}

// Each client command explains TARGET with its own name, not with
// "tools list".
func TestTargetHelpUsesTheCommandsOwnName(t *testing.T) {
	n := 0
	for _, c := range allCommands() {
		if _, ok := c.Annotations[annotClientLong]; !ok {
			continue
		}
		n++
		path := c.CommandPath()
		ops := strings.Fields(c.Annotations[annotClientOps])
		url := strings.TrimSpace(strings.Join(append([]string{path, "http://127.0.0.1:8765/mcp"}, ops...), " "))
		cmdLine := strings.Join(append(append([]string{path}, ops...), "-- mcpgate serve --stdio"), " ")
		for _, want := range []string{url, cmdLine} {
			if !strings.Contains(c.Long, "      "+want+"\n") {
				t.Errorf("%s --help: its TARGET paragraph lacks %q:\n%s", path, want, c.Long)
			}
		}
		if path != "mcpgate tools list" && strings.Contains(c.Long, "mcpgate tools list") {
			t.Errorf("%s --help shows tools list:\n%s", path, c.Long)
		}
	}
	if n < 7 {
		t.Errorf("%d client commands found, want the 7 of tools, resources, prompts and ping", n)
	}
}

// A URL typed without its scheme gets "did you mean http://", not advice
// to start it as a command.
func TestTargetWithoutSchemeSuggestsHTTP(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		words []string
	}{
		{[]string{"ping", "127.0.0.1:18765/mcp"}, []string{`did you mean http://127.0.0.1:18765/mcp?`, "mcpgate ping http://127.0.0.1:18765/mcp"}},
		{[]string{"tools", "call", "localhost:8765/mcp", "create_task"}, []string{"did you mean http://localhost:8765/mcp?", "mcpgate tools call http://localhost:8765/mcp create_task"}},
		{[]string{"tools", "list", "mcp.example.com/mcp"}, []string{"did you mean http://mcp.example.com/mcp?"}},
		{[]string{"ping", "[::1]:8765/mcp"}, []string{"did you mean http://[::1]:8765/mcp?"}},
		// Commands still get the advice about "--".
		{[]string{"ping", "server.py"}, []string{`put it after "--": mcpgate ping -- server.py`}},
		{[]string{"ping", "./server"}, []string{`put it after "--": mcpgate ping -- ./server`}},
		{[]string{"tools", "list", "npx"}, []string{`put it after "--": mcpgate tools list -- npx`}},
	} {
		r := fails(t, tt.words, tt.args)
		if strings.Contains(strings.Join(tt.words, ""), "did you mean") && strings.Contains(r.stderr, `"--"`) {
			t.Errorf("mcpgate %q suggests \"--\" for a URL:\n%s", tt.args, r.stderr)
		}
	}
}

func TestLicenseAndNotice(t *testing.T) {
	license, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Apache License", "Version 2.0, January 2004", "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION", "END OF TERMS AND CONDITIONS"} {
		if !strings.Contains(string(license), w) {
			t.Errorf("LICENSE lacks %q", w)
		}
	}
	notice, err := os.ReadFile("../../NOTICE")
	if err != nil {
		t.Fatal(err)
	}
	// A directory with a LICENSE of its own is a vendored copy, and NOTICE
	// must name it. (There is none now: third-party code comes in through
	// go.mod, whose modules carry their own licenses.)
	err = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "../.." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "LICENSE" || path == filepath.Join("../..", "LICENSE") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, "../../")))
		if !strings.Contains(string(notice), dir) {
			t.Errorf("%s has a LICENSE of its own, but NOTICE does not name it", dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
