package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/gateway/pins"
	"github.com/mcpgate/mcpgate/internal/postgres"
)

// pinsFlags find the state database: --db, else the configuration's
// state.db, else the default place.
type pinsFlags struct {
	config string
	db     string
}

func newPinsCmd() *cobra.Command {
	var f pinsFlags
	cmd := &cobra.Command{
		Use:   "pins",
		Short: "Review and approve the gateway's tool-definition pins",
		Long: `The gateway pins every tool's definition (name, title, description, input
and output schemas, annotations) the first time it sees it, and notices
when a server changes it. Each server's "pins" setting decides what it
does then: warn (publish it, log and audit the diff), block (serve the
pinned definition and refuse calls) or approve (withhold the tool).

These commands work on the gateway's state database (state.db in the
configuration, --db, or the default place): a SQLite file, or the
postgres:// URL of the Postgres database that a gateway's replicas
share. A running gateway, every replica of it, notices an approval or
a reset within a second or two, without a restart.

  mcpgate pins list [SERVER]          every pin, its state and what the scanner flags
  mcpgate pins diff SERVER[/TOOL]     what a pending definition changes
  mcpgate pins approve SERVER[/TOOL]  approve what waits (a flagged tool only by name)
  mcpgate pins reset SERVER[/TOOL]    forget pins: the tools are met again as new

TOOL is the name the server gives the tool, without the gateway's prefix.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVarP(&f.config, "config", "c", envOr("MCPGATE_CONFIG", ""), "the gateway's configuration, whose state.db names the database (env MCPGATE_CONFIG)")
	pf.StringVar(&f.db, "db", "", "the state database itself, a SQLite file or a postgres:// URL (default: the configuration's state.db, $MCPGATE_STATE_DB, or state.db in the user data directory)")

	var asJSON bool
	list := &cobra.Command{
		Use:   "list [SERVER]",
		Short: "List the pins and their state (approved, new, changed)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, err := f.open()
			if err != nil {
				return err
			}
			defer st.Close()
			server := ""
			if len(args) == 1 {
				server = args[0]
			}
			return pinsList(cmd.Context(), cmd.OutOrStdout(), st, server, asJSON)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	diff := &cobra.Command{
		Use:   "diff SERVER[/TOOL]",
		Short: "Show what the definitions waiting for approval change",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, err := f.open()
			if err != nil {
				return err
			}
			defer st.Close()
			server, tool := splitPin(args[0])
			return pinsDiff(cmd.Context(), cmd.OutOrStdout(), st, server, tool)
		},
	}

	var hash string
	approve := &cobra.Command{
		Use:   "approve SERVER[/TOOL]",
		Short: "Approve the definitions waiting: publish them, unblock their calls",
		Long: `Approve the definitions that wait for approval: the gateway publishes them
(and lets calls of a blocked tool through) within a second or two.

SERVER alone approves every tool of the server that waits, except those
the scanner flags as suspicious: read each (mcpgate pins diff SERVER/TOOL)
and approve it by name. --hash approves a tool's definition only if it is
still the one you reviewed (diff prints its hash).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, cfg, err := f.open()
			if err != nil {
				return err
			}
			defer st.Close()
			server, tool := splitPin(args[0])
			as, err := st.Approve(cmd.Context(), server, tool, hash)
			if err != nil {
				return err
			}
			audit := openCLIAudit(cfg)
			defer audit.close()
			return pinsApproved(cmd.OutOrStdout(), cmd.ErrOrStderr(), audit, as, tool != "")
		},
	}
	approve.Flags().StringVar(&hash, "hash", "", "approve only if the tool's pending definition has this hash (a prefix of it)")

	reset := &cobra.Command{
		Use:   "reset SERVER[/TOOL]",
		Short: "Forget pins: the gateway meets the tools again as new",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, cfg, err := f.open()
			if err != nil {
				return err
			}
			defer st.Close()
			server, tool := splitPin(args[0])
			n, err := st.Reset(cmd.Context(), server, tool)
			if err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("%w matches %s", pins.ErrNotFound, args[0])
			}
			fmt.Fprintf(cmd.OutOrStdout(), "forgot %d pin%s of %s; the gateway meets them again as new tools under the server's policy\n", n, plural(n), args[0])
			audit := openCLIAudit(cfg)
			defer audit.close()
			audit.record("pins/reset", tool, server, fmt.Sprintf("%d pins", n))
			return nil
		},
	}
	cmd.AddCommand(list, diff, approve, reset)
	return cmd
}

// open opens the state database, and reads the configuration when one
// is named (nil otherwise).
func (f *pinsFlags) open() (*pins.Store, *config.Config, error) {
	var cfg *config.Config
	if f.config != "" {
		var err error
		if cfg, err = loadConfig(f.config); err != nil {
			return nil, nil, err
		}
	}
	path := f.db
	if path == "" && cfg != nil {
		path = cfg.State.DB
	}
	if path == "" {
		var err error
		if path, err = pins.DefaultPath(); err != nil {
			return nil, nil, fmt.Errorf("finding the state database: %w (name it with --db, or --config with state.db)", err)
		}
	}
	if postgres.IsURL(path) {
		st, err := pins.Open(path) // its error names the database, the password hidden
		if err != nil {
			return nil, nil, err
		}
		return st, cfg, nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("no state database at %s: start the gateway first, or name the gateway's with --config or --db", path)
	}
	st, err := pins.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the state database %s: %w", path, err)
	}
	return st, cfg, nil
}

// splitPin reads SERVER[/TOOL]; server names have no '/', tool names
// may.
func splitPin(s string) (server, tool string) {
	server, tool, _ = strings.Cut(s, "/")
	return server, tool
}

func pinsList(ctx context.Context, w io.Writer, st *pins.Store, server string, asJSON bool) error {
	ps, err := st.List(ctx, server)
	if err != nil {
		return err
	}
	rs := make([]pins.Report, 0, len(ps))
	for _, p := range ps {
		rs = append(rs, p.Report())
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rs)
	}
	if len(rs) == 0 {
		fmt.Fprintln(w, "no pins yet: the gateway pins a server's tools when it first lists them")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSTATE\tAPPROVED\tPENDING\tBY\tSCANNER")
	for _, r := range rs {
		flags := "-"
		if len(r.Findings) > 0 {
			var rules []string
			for _, f := range r.Findings {
				rules = append(rules, f.Rule)
			}
			flags = "suspicious: " + strings.Join(rules, ", ")
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%s\t%s\n", r.Server, r.Tool, r.State, short(r.Hash), short(r.SeenHash), dash(r.ApprovedBy), flags)
	}
	return tw.Flush()
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return dash(h)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func pinsDiff(ctx context.Context, w io.Writer, st *pins.Store, server, tool string) error {
	var ps []*pins.Pin
	if tool != "" {
		p, err := st.Get(ctx, server, tool)
		if err != nil {
			return err
		}
		ps = []*pins.Pin{p}
	} else {
		all, err := st.List(ctx, server)
		if err != nil {
			return err
		}
		if len(all) == 0 {
			return fmt.Errorf("%w of server %q", pins.ErrNotFound, server)
		}
		ps = all
	}
	shown := 0
	for _, p := range ps {
		d, err := p.Diff()
		if err != nil {
			return err
		}
		r := p.Report()
		if d == "" && (tool == "" || len(r.Findings) == 0) {
			continue
		}
		shown++
		fmt.Fprintf(w, "== %s/%s: %s", p.Server, p.Tool, r.State)
		if p.SeenHash != "" {
			fmt.Fprintf(w, ", pending definition %s (approve it with --hash %.12s)", p.SeenHash, p.SeenHash)
		}
		fmt.Fprintln(w)
		for _, f := range r.Findings {
			fmt.Fprintf(w, "suspicious: %s\n", f)
		}
		fmt.Fprint(w, d)
	}
	if shown == 0 {
		fmt.Fprintf(w, "nothing of %s waits for approval\n", strings.TrimSuffix(server+"/"+tool, "/"))
	}
	return nil
}

// pinsApproved prints what an approval did; naming a tool that was not
// approved is an error.
func pinsApproved(stdout, stderr io.Writer, audit *cliAudit, as []pins.Approval, named bool) error {
	approved := 0
	var skipped []string
	for _, a := range as {
		name := a.Pin.Server + "/" + a.Pin.Tool
		if a.Skipped != "" {
			skipped = append(skipped, name+": "+a.Skipped)
			fmt.Fprintf(stderr, "not approved %s: %s\n", name, a.Skipped)
			continue
		}
		approved++
		fmt.Fprintf(stdout, "approved %s (%.12s)\n", name, a.Pin.Hash)
		audit.record("pins/approved", a.Pin.Tool, a.Pin.Server, a.Pin.Hash)
	}
	switch {
	case named && approved == 0:
		return errors.New(strings.Join(skipped, "; "))
	case approved == 0 && len(skipped) == 0:
		fmt.Fprintln(stdout, "nothing waits for approval")
	case approved > 0:
		fmt.Fprintln(stdout, "a running gateway publishes the approved definitions within a second or two")
	}
	return nil
}

// cliAudit writes approvals and resets to the gateway's audit log, when
// the configuration keeps one, naming the local user; nil keeps none.
type cliAudit struct {
	a   *gateway.Audit
	who string
}

func openCLIAudit(cfg *config.Config) *cliAudit {
	if cfg == nil || cfg.Audit.DB == "" {
		return nil
	}
	a, err := gateway.OpenAudit(cfg.Audit.DB, cfg.Audit.Retention.D(), slog.Default())
	if err != nil {
		slog.Warn("mcpgate: could not open the audit log to record this", "error", err)
		return nil
	}
	who := "cli"
	if u, err := user.Current(); err == nil {
		who = "cli:" + u.Username
	}
	return &cliAudit{a: a, who: who}
}

func (c *cliAudit) record(method, tool, server, detail string) {
	if c == nil {
		return
	}
	outcome := strings.TrimPrefix(method, "pins/")
	c.a.Record(gateway.AuditRecord{Time: time.Now(), Principal: c.who, Method: method, Tool: tool, Upstream: server, Outcome: outcome, Detail: outcome + " by " + c.who + ": " + detail})
}

// close writes what is queued.
func (c *cliAudit) close() {
	if c != nil {
		c.a.Close()
	}
}
