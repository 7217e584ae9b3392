package auth_test

import (
	"log"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// An MCP server that accepts API keys and OAuth access tokens, with one
// tool that needs an extra scope.
func ExampleNew() {
	keys, err := auth.ParseAPIKeys(strings.NewReader("ci:sha256:" + auth.HashAPIKey("mcpg_example") + "\n"))
	if err != nil {
		log.Fatal(err)
	}
	oauth, err := auth.NewOAuth(auth.OAuthConfig{
		Issuer:         "https://login.example.com",
		Resource:       "https://mcp.example.com/mcp",
		RequiredScopes: []string{"mcp"},
	})
	if err != nil {
		log.Fatal(err)
	}
	m, err := auth.New(auth.Config{
		APIKeys:      keys,
		OAuth:        oauth,
		MethodScopes: map[string][]string{"tools/call:drop_table": {"mcp:admin"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	h := mcphttp.NewHandler(server, &mcphttp.Options{
		Principal: m.PrincipalID, // sessions belong to who opened them
		Authorize: m.Authorize,   // per-method scopes
	})
	_ = http.ListenAndServe("127.0.0.1:8765", m.Wrap(h))
}
