package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/gateway"
)

// newStatusCmd is mcpgate status: each upstream of a running gateway,
// from its ops listener's admin status.
func newStatusCmd() *cobra.Command {
	var tokenFile, retry string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [URL]",
		Short: "Show each upstream of a running gateway: state, since when, last error, calls, latency",
		Long: `Show each upstream of a running gateway (mcpgate serve --config FILE
--metrics-addr ADDR --admin-token-file FILE): its state and since when, its
last error, tools, restarts, calls, errors and latency (p50, p99 of the
latest calls), and whether the gateway is ready. A server that failed to
start the same way again and again is "failed", one that refused the
gateway's credentials "auth-failed" (its error says what to check); both
wait for --retry (or, for auth-failed, a change of the server's settings).

URL is the gateway's ops listener (--metrics-addr); by default
MCPGATE_METRICS_ADDR, else http://127.0.0.1:9464. The admin token comes
from --admin-token-file, MCPGATE_ADMIN_TOKEN_FILE or MCPGATE_ADMIN_TOKEN.`,
		Example: `  mcpgate status http://127.0.0.1:9464 --admin-token-file admin.token
  MCPGATE_ADMIN_TOKEN=... mcpgate status --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			base := "http://" + envOr("MCPGATE_METRICS_ADDR", "127.0.0.1:9464")
			if len(args) == 1 {
				base = args[0]
			}
			if !strings.Contains(base, "://") {
				base = "http://" + base
			}
			token := os.Getenv("MCPGATE_ADMIN_TOKEN")
			if tokenFile != "" {
				b, err := os.ReadFile(tokenFile)
				if err != nil {
					return fmt.Errorf("--admin-token-file: %w", err)
				}
				token = strings.TrimSpace(string(b))
			}
			if token == "" {
				return errors.New("the status needs the gateway's admin token: --admin-token-file FILE, or MCPGATE_ADMIN_TOKEN")
			}
			if retry != "" {
				if err := postRetry(cmd.Context(), strings.TrimSuffix(base, "/")+"/admin/retry?server="+url.QueryEscape(retry), token); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "mcpgate: asked the gateway to start %s again\n", retry)
			}
			st, raw, err := fetchStatus(cmd.Context(), strings.TrimSuffix(base, "/")+"/admin/status", token)
			if err != nil {
				return err
			}
			if asJSON {
				_, err := cmd.OutOrStdout().Write(raw)
				return err
			}
			printStatus(cmd.OutOrStdout(), st)
			return nil
		},
	}
	cmd.Flags().StringVar(&tokenFile, "admin-token-file", envOr("MCPGATE_ADMIN_TOKEN_FILE", ""), "a file holding the gateway's admin token (env MCPGATE_ADMIN_TOKEN_FILE, or the token itself in MCPGATE_ADMIN_TOKEN)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the gateway's answer as JSON")
	cmd.Flags().StringVar(&retry, "retry", "", "first ask the gateway to start this server again now (one that failed, or is waiting to retry)")
	return cmd
}

type gatewayStatus struct {
	Ready     bool                     `json:"ready"`
	Version   string                   `json:"version"`
	Upstreams []gateway.UpstreamStatus `json:"upstreams"`
}

func fetchStatus(ctx context.Context, url, token string) (*gatewayStatus, []byte, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w (is the gateway running with --metrics-addr?)", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return nil, nil, fmt.Errorf("%s refused the admin token (HTTP 401): %s", url, strings.TrimSpace(string(raw)))
	default:
		return nil, nil, fmt.Errorf("%s answered HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(string(raw)))
	}
	var st gatewayStatus
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, nil, fmt.Errorf("%s: not a gateway's status: %w", url, err)
	}
	return &st, raw, nil
}

func printStatus(w io.Writer, st *gatewayStatus) {
	verdict := "ready"
	if !st.Ready {
		verdict = "NOT ready (a required upstream is down, or the first discovery is under way)"
	}
	fmt.Fprintf(w, "gateway %s: %s\n\n", st.Version, verdict)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UPSTREAM\tSTATE\tSINCE\tTOOLS\tRESTARTS\tCALLS\tERRORS\tP50\tP99")
	for _, u := range st.Upstreams {
		name := u.Name
		if u.Required {
			name += " (required)"
		}
		if u.Bare {
			name += " (bare)" // a tool server without the MCP lifecycle
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", name, u.State, ago(u.Since), u.Tools, u.Restarts, u.Calls, u.Errors,
			msText(u.P50Ms), msText(u.P99Ms))
	}
	tw.Flush()
	// Errors whole, below: what happened is usually at their end (an
	// exit status, the server's last words on stderr).
	for _, u := range st.Upstreams {
		if u.Error != "" {
			fmt.Fprintf(w, "\n%s: %s\n", u.Name, truncateText(u.Error, 2000))
		}
	}
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return time.Since(t).Round(time.Second).String() + " ago"
}

func msText(ms float64) string {
	if ms == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fms", ms)
}

func truncateText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// postRetry asks the gateway to start a server again.
func postRetry(ctx context.Context, u, token string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("--retry: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("--retry: the gateway answered HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}
