package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/spf13/cobra"
)

func newCheckConfigCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check-config FILE",
		Short: "Check a gateway configuration file and summarize it",
		Long: `Check a gateway configuration file (JSON or YAML; a Claude Desktop
claude_desktop_config.json works as it is) without starting anything.

Every problem is printed to standard error as FILE:LINE:COL: message
(hint: ...), all at once, and the exit status is 1. A good file gives
a summary on standard output (each server's transport and start mode,
the built-in tools) and its warnings on standard error, and status 0.

${VAR} and ${VAR:-default} are read from the environment, as the gateway
will read them. Secrets are never printed: env and header values, tokens,
client secrets and whatever came from a variable show as [redacted].`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return checkConfig(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0])
		},
	}
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
	for _, w := range c.Warnings {
		w := *w
		w.Msg = "warning: " + w.Msg
		fmt.Fprintln(stderr, &w)
	}
	summarize(stdout, file, c.Redacted())
	return nil
}

func summarize(w io.Writer, file string, c *config.Config) {
	fmt.Fprintf(w, "%s: OK, %d server%s", file, len(c.Servers), plural(len(c.Servers)))
	if n := len(c.Warnings); n > 0 {
		fmt.Fprintf(w, ", %d warning%s", n, plural(n))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		s := c.Servers[name]
		start := s.Start
		if s.Disabled {
			start = "disabled"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", name, s.Transport(), start, upstreamDetail(s))
	}
	tw.Flush()
	builtins := "none"
	if c.Builtins.Tasks {
		builtins = "tasks (database: " + cmp.Or(c.Builtins.TasksDB, "the default place") + ")"
	}
	fmt.Fprintln(w, "builtins:", builtins)
	fmt.Fprintln(w, "listen:", cmp.Or(c.Listen, "serve's --addr ("+defaultAddr+")"))
	fmt.Fprintf(w, "tool names: SERVER%sTOOL\n", c.Separator)
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
