package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/spf13/cobra"
)

func newCheckConfigCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check-config [FILE]",
		Short: "Check a gateway configuration file and summarize it",
		Long: `Check a gateway configuration file (JSON or YAML; a Claude Desktop
claude_desktop_config.json works as it is) without starting anything.
Without FILE it checks $MCPGATE_CONFIG, else Claude Desktop's config
(` + claudeDesktopConfigHelp() + `), and says which.

Every problem is printed to standard error as FILE:LINE:COL: message
(hint: ...), all at once, and the exit status is 1. A good file gives
a summary on standard output (each server's transport and start mode,
the built-in tools, the tool listing mode) and its warnings on standard
error, and status 0. Warnings include what the gateway would trip on
later: a command not found in PATH (looked up with this shell's PATH;
a client that starts the gateway may give it another), comments or
trailing commas, which mcpgate reads but Claude Desktop refuses, and
more than ` + strconv.Itoa(maxEager) + ` command servers that start eagerly (each a process
kept running; one run with npx takes about 100-200 MB).

${VAR} and ${VAR:-default} are read from the environment, as the gateway
will read them. Secrets are never printed: env and header values, tokens
and client secrets show as [redacted], and so do the parts of arguments
and URLs that read as secrets: a password in a URL, the value of a flag
such as --api-key or --access-token, a value after -t or -k that reads
as a credential, keys of known shapes (sk_, sbp_, ghp_ ...), long random
tokens, and a variable's value when its name says it holds a secret
(${GITHUB_TOKEN}). Other values show, ${SCRATCH}/sandbox as the path it is.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var file string
			if len(args) == 1 {
				file = args[0]
			} else {
				var why string
				var err error
				if file, why, err = defaultConfigFile(); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "mcpgate: no FILE given: checking %s, %s\n", file, why)
			}
			return checkConfig(cmd.OutOrStdout(), cmd.ErrOrStderr(), file)
		},
	}
}

// claudeDesktopConfig is where Claude Desktop keeps its configuration on
// this system: the user's config directory (~/Library/Application
// Support on macOS, %APPDATA% on Windows, $XDG_CONFIG_HOME or ~/.config
// elsewhere), as Electron's appData is.
func claudeDesktopConfig() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "Claude", "claude_desktop_config.json"), nil
}

func claudeDesktopConfigHelp() string {
	switch runtime.GOOS {
	case "darwin":
		return "~/Library/Application Support/Claude/claude_desktop_config.json"
	case "windows":
		return `%APPDATA%\Claude\claude_desktop_config.json`
	}
	return "~/.config/Claude/claude_desktop_config.json" // or $XDG_CONFIG_HOME/Claude/...
}

// defaultConfigFile is the file check-config reads when given none:
// $MCPGATE_CONFIG, as serve reads it (even when it does not exist, since
// a person set it), else Claude Desktop's config when there is one. why
// says which it is; the error lists what was looked for.
func defaultConfigFile() (file, why string, err error) {
	if f := os.Getenv("MCPGATE_CONFIG"); f != "" {
		return f, "from $MCPGATE_CONFIG", nil
	}
	looked := []string{"$MCPGATE_CONFIG: not set"}
	f, err := claudeDesktopConfig()
	if err == nil {
		if _, err = os.Stat(f); err == nil {
			return f, "Claude Desktop's config", nil
		}
		looked = append(looked, f+" (Claude Desktop's config): "+errText(err))
	} else {
		looked = append(looked, "Claude Desktop's config: "+err.Error())
	}
	return "", "", fmt.Errorf("no FILE given, and no default configuration found. Looked for:\n  %s\n"+
		"Give the file to check: mcpgate check-config FILE (a gateway config in JSON or YAML, or a claude_desktop_config.json)",
		strings.Join(looked, "\n  "))
}

// errText is a file error without the path it repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(err, fs.ErrNotExist) {
			return "no such file"
		}
		return pe.Err.Error()
	}
	return err.Error()
}

func checkConfig(stdout, stderr io.Writer, file string) error {
	c, err := config.Load(file, os.LookupEnv)
	if errs := config.ErrorList(err); errs != nil {
		for _, d := range errs {
			fmt.Fprintln(stderr, d)
		}
		return fmt.Errorf("%s: %d error%s", file, len(errs), plural(len(errs)))
	}
	if err != nil {
		return err
	}
	warns := append(slices.Clone(c.Warnings), c.LookCommands()...)
	if w := eagerWarning(file, c); w != nil {
		warns = append(warns, w)
	}
	slices.SortStableFunc(warns, func(a, b *config.Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	for _, w := range warns {
		w := *w
		w.Msg = "warning: " + w.Msg
		fmt.Fprintln(stderr, &w)
	}
	summarize(stdout, file, c, len(warns))
	return nil
}

// maxEager is how many command servers may start eagerly before
// check-config warns. Each is a process kept running from load; one run
// with npx is npm's wrapper plus node, about 100-200 MB, so eight are
// already a gigabyte or more that a laptop running a desktop client
// feels, spent whether or not the servers are used.
const maxEager = 8

// eagerWarning warns of more than maxEager enabled command servers that
// start eagerly, at defaults.start when that is where eager comes from,
// else at the first such server's start.
func eagerWarning(file string, c *config.Config) *config.Diagnostic {
	var eager []config.Pos
	for name, s := range c.Servers {
		if s != nil && !s.Disabled && s.Command != "" && s.Start == "eager" {
			eager = append(eager, c.At("mcpServers", name, "start"))
		}
	}
	n := len(eager)
	if n <= maxEager {
		return nil
	}
	pos := slices.MinFunc(eager, func(a, b config.Pos) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	if c.Defaults.Start == "eager" {
		pos = c.At("defaults", "start")
	}
	return &config.Diagnostic{File: file, Pos: pos,
		Msg: fmt.Sprintf("%d command servers start eagerly (start: eager) and run from load until the gateway stops: "+
			"one run with npx is npm's wrapper plus node, about 100-200 MB, so %d take about %.1f-%.1f GB before any is used",
			n, n, float64(n)*0.1, float64(n)*0.2),
		Hint: "write start: lazy (a command server's default: it starts on first use), and set idleTimeout " +
			"(such as defaults: {start: lazy, idleTimeout: 10m}) so that each runs only while it is used"}
}

// summarize writes what the gateway will serve. c is the config as
// loaded: what is printed comes from its redacted copy.
func summarize(w io.Writer, file string, loaded *config.Config, warnings int) {
	c := loaded.Redacted()
	fmt.Fprintf(w, "%s: OK, %d server%s", file, len(c.Servers), plural(len(c.Servers)))
	if warnings > 0 {
		fmt.Fprintf(w, ", %d warning%s", warnings, plural(warnings))
	}
	fmt.Fprintln(w)
	listing := cmp.Or(c.ToolSearch.Listing, config.ListingFull)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		s := c.Servers[name]
		start := s.Start
		if s.Disabled {
			start = "disabled"
		}
		detail := upstreamDetail(s)
		if mode := c.ToolSearch.Servers[name]; mode != "" && mode != listing {
			detail += "; listing " + mode
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", name, s.Transport(), start, detail)
	}
	tw.Flush()
	builtins := "none"
	if c.Builtins.Tasks {
		builtins = "tasks (database: " + cmp.Or(c.Builtins.TasksDB, "the default place") + ")"
	}
	fmt.Fprintln(w, "builtins:", builtins)
	fmt.Fprintln(w, "tool listing:", toolListing(c, listing))
	if len(c.Tenants) > 0 {
		var ts []string
		for _, name := range slices.Sorted(maps.Keys(c.Tenants)) {
			if l := c.Tenants[name].ToolListing; l != "" && l != listing {
				name += " (listing " + l + ")"
			}
			ts = append(ts, name)
		}
		fmt.Fprintln(w, "tenants:", strings.Join(ts, ", "))
	}
	switch {
	case c.Listen == "":
		fmt.Fprintln(w, "listen: serve's --addr ("+defaultAddr+")")
	case loopbackAddr(loaded.Listen):
		fmt.Fprintln(w, "listen:", c.Listen)
	default:
		fmt.Fprintln(w, "listen:", c.Listen, "(reachable from other machines: serve needs --auth-keys, --auth-users or --oauth-issuer, or --allow-anonymous behind a proxy that authenticates)")
	}
	fmt.Fprintf(w, "tool names: SERVER%sTOOL\n", c.Separator)
}

// toolListing says how tools/list shows tools: the mode, and what search
// mode keeps listed and how it ranks.
func toolListing(c *config.Config, mode string) string {
	var what []string
	switch mode {
	case config.ListingFull:
		what = append(what, "full definitions")
	case config.ListingMinimal:
		what = append(what, "names and one-line descriptions; schemas on demand")
	case config.ListingSearch:
		what = append(what, "pinned tools and the meta-tools search_tools, describe_tool and call_tool")
	}
	if n := len(c.ToolSearch.Pinned); n > 0 {
		what = append(what, fmt.Sprintf("%d pinned pattern%s listed in full", n, plural(n)))
	}
	if e := c.ToolSearch.Embeddings; e != nil {
		what = append(what, "embeddings "+e.Model+" at "+e.URL)
	}
	return mode + " (" + strings.Join(what, "; ") + ")"
}

// upstreamDetail is what a server runs or reaches, and with which
// credentials, named but never shown.
func upstreamDetail(s *config.Server) string {
	var parts []string
	if s.Command != "" {
		line := []string{shellQuote(s.Command)}
		for _, a := range s.Args {
			line = append(line, shellQuote(a))
		}
		parts = append(parts, strings.Join(line, " "))
		if len(s.Env) > 0 {
			parts = append(parts, "env: "+strings.Join(slices.Sorted(maps.Keys(s.Env)), ", "))
		}
	} else {
		parts = append(parts, s.URL)
		if len(s.Headers) > 0 {
			parts = append(parts, "headers: "+strings.Join(slices.Sorted(maps.Keys(s.Headers)), ", "))
		}
		if s.BearerToken != "" {
			parts = append(parts, "bearer token")
		}
		if s.OAuth != nil {
			parts = append(parts, "oauth "+s.OAuth.Grant)
		}
	}
	var policy []string
	for _, p := range []struct {
		what string
		n    int
	}{{"allow", len(s.Tools.Allow)}, {"deny", len(s.Tools.Deny)}, {"rename", len(s.Tools.Rename)}} {
		if p.n > 0 {
			policy = append(policy, fmt.Sprintf("%s %d", p.what, p.n))
		}
	}
	if len(policy) > 0 {
		parts = append(parts, "tools: "+strings.Join(policy, ", "))
	}
	if s.Pins != "" && s.Pins != config.PinsWarn {
		parts = append(parts, "pins "+s.Pins)
	}
	return strings.Join(parts, "; ")
}

// shellQuote quotes as a POSIX shell would need, so that a summary line
// can be pasted (Windows paths keep their single backslashes).
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\$`;&|<>()*?!#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
