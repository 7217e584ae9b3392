package oauthclient_test

import (
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
)

// A command-line tool that signs the user in with a browser and keeps the
// tokens between runs.
func ExampleNewTransport() {
	la, err := oauthclient.NewLoopbackAuthorizer(0, func(authURL string) error {
		// Or start a browser without a shell: exec.Command("xdg-open", authURL).Start().
		_, err := fmt.Fprintln(os.Stderr, "Sign in at:", authURL)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	defer la.Close()
	home, _ := os.UserConfigDir()
	hc := &http.Client{Transport: oauthclient.NewTransport(oauthclient.Config{
		ServerURL:   "https://mcp.example.com/mcp",
		RedirectURL: la.RedirectURL(),
		Authorize:   la.Authorize,
		ClientName:  "my-tool",
		Store:       oauthclient.NewFileStore(filepath.Join(home, "my-tool", "tokens.json")),
	}, nil)}
	// hc is the HTTP client of the MCP transport, e.g.
	// mcphttp.ClientTransport{Endpoint: "https://mcp.example.com/mcp", HTTPClient: hc}.
	_ = hc
}

// A service that authenticates as itself with the client credentials
// grant and a private_key_jwt assertion.
func ExampleConfig_clientCredentials() {
	key, err := os.ReadFile("/etc/my-service/client-key.pem")
	if err != nil {
		log.Fatal(err)
	}
	hc := &http.Client{Transport: oauthclient.NewTransport(oauthclient.Config{
		GrantType:        oauthclient.GrantClientCredentials,
		ClientID:         "my-service",
		PrivateKeyPEM:    string(key),
		SigningAlgorithm: "ES256",
	}, nil)}
	_ = hc
}

// Enterprise-managed authorization: the user's ID token from the
// enterprise IdP is exchanged there for an ID-JAG, which the MCP server's
// authorization server takes in the JWT bearer grant. No browser.
func ExampleTokenExchange() {
	idToken := os.Getenv("ID_TOKEN") // from the user's sign-in at the IdP
	x := &oauthclient.TokenExchange{
		TokenEndpoint: "https://idp.example.com/oauth2/token",
		ClientID:      "my-agent",
		ClientSecret:  os.Getenv("IDP_CLIENT_SECRET"),
		SubjectToken:  idToken,
	}
	hc := &http.Client{Transport: oauthclient.NewTransport(oauthclient.Config{
		ServerURL:    "https://mcp.example.com/mcp",
		GrantType:    oauthclient.GrantJWTBearer,
		ClientID:     "my-agent-at-mcp-example",
		ClientSecret: os.Getenv("AS_CLIENT_SECRET"),
		Assertion:    x.Assertion(),
	}, nil)}
	_ = hc
}
