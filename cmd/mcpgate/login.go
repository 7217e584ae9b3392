package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

func newLoginCmd() *cobra.Command {
	var cfgPath string
	cmd := &cobra.Command{
		Use:   "login SERVER",
		Short: "Sign in to a gateway upstream whose oauth grant is authorization_code",
		Long: `Sign in, in a browser, to the upstream SERVER of a gateway configuration
whose oauth grant is authorization_code. The tokens are kept in
` + oauthTokenFileHint() + `; the gateway (mcpgate serve --config) uses them
on that upstream's hop only and refreshes them as they expire. Run it
again when the gateway logs that the upstream refused its credentials.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return login(cmd.Context(), cfgPath, args[0])
		},
	}
	cmd.Flags().StringVarP(&cfgPath, "config", "c", envOr("MCPGATE_CONFIG", ""), "gateway configuration file (env MCPGATE_CONFIG)")
	return cmd
}

func login(ctx context.Context, cfgPath, server string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if cfgPath == "" {
		return fmt.Errorf("--config is required: the file that lists %s", server)
	}
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return err
	}
	sc := cfg.Servers[server]
	switch {
	case sc == nil:
		return fmt.Errorf("%s lists no server %q", cfgPath, server)
	case sc.URL == "" || sc.OAuth == nil || sc.OAuth.Grant != oauthclient.GrantAuthorizationCode:
		return fmt.Errorf("server %q has no oauth with grant authorization_code: nothing to sign in to", server)
	}
	path, err := oauthTokenFile()
	if err != nil {
		return err
	}
	la, err := oauthclient.NewLoopbackAuthorizer(0, func(authURL string) error { return openBrowser(sc.URL, authURL) })
	if err != nil {
		return err
	}
	defer la.Close()
	tr := oauthclient.NewTransport(oauthclient.Config{
		ServerURL: sc.URL, GrantType: oauthclient.GrantAuthorizationCode,
		ClientID: sc.OAuth.ClientID, ClientSecret: sc.OAuth.ClientSecret, Scopes: sc.OAuth.Scopes,
		ClientName: "mcpgate", RedirectURL: la.RedirectURL(), Authorize: la.Authorize,
		Store: oauthclient.NewFileStore(path), Logger: slog.Default(),
	}, nil)
	ctx, cancel := context.WithTimeout(ctx, oauthSignInTime)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpgate-login", Version: buildVersion()}, nil).
		Connect(ctx, &mcphttp.ClientTransport{Endpoint: sc.URL, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		return explainOAuth(err, sc.URL)
	}
	cs.Close()
	fmt.Fprintf(os.Stderr, "Signed in to %s (%s); the gateway will use and refresh the token kept in %s.\n", server, sc.URL, path)
	return nil
}
