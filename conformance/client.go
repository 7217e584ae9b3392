package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// The client side of the official suite: the runner starts a test server
// for each scenario and runs our client with the server's URL, the
// scenario's name in MCP_CONFORMANCE_SCENARIO and, for some auth
// scenarios, credentials in MCP_CONFORMANCE_CONTEXT. The client does what
// an ordinary application would for that server; the runner scores the
// traffic it sees.

// ClientContext is the JSON of MCP_CONFORMANCE_CONTEXT.
type ClientContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	// Cross-app access (SEP-990): the enterprise IdP and the user's ID
	// token there.
	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPIssuer        string `json:"idp_issuer"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
}

// clientMetadataURL is the client ID metadata document the suite's
// authorization server accepts without fetching it.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// RunClient plays scenario against the server at serverURL. contextJSON
// is MCP_CONFORMANCE_CONTEXT, possibly empty. An error means the client
// could not do what the scenario asks (or, for scenarios that test
// refusals, that it rightly refused).
func RunClient(ctx context.Context, serverURL, scenario, contextJSON string, logger *slog.Logger) error {
	var cc ClientContext
	if strings.TrimSpace(contextJSON) != "" {
		if err := json.Unmarshal([]byte(contextJSON), &cc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT is not a JSON object of strings: %w", err)
		}
	}
	if logger == nil {
		logger = slog.Default()
	}
	switch scenario {
	case "initialize":
		return session(ctx, serverURL, nil, nil, logger, func(cs *mcp.ClientSession) error {
			_, err := cs.ListTools(ctx, nil)
			return err
		})
	case "tools_call":
		return session(ctx, serverURL, nil, nil, logger, func(cs *mcp.ClientSession) error {
			return callOK(ctx, cs, "add_numbers", map[string]any{"a": 5, "b": 3})
		})
	case "elicitation-sep1034-client-defaults":
		opts := &mcp.ClientOptions{
			// A user who accepts the form as shown: every default taken.
			ElicitationHandler: func(ctx context.Context, _ *mcp.ClientSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: mcp.ApplyElicitationDefaults(p, nil)}, nil
			},
		}
		return session(ctx, serverURL, nil, opts, logger, func(cs *mcp.ClientSession) error {
			return callOK(ctx, cs, "test_client_elicitation_defaults", nil)
		})
	case "json-schema-2020-12-preservation":
		// The schema a client received goes back as it came, every
		// 2020-12 keyword included: schemas are kept as JSON values, never
		// parsed into a struct that knows only some keywords.
		return session(ctx, serverURL, nil, nil, logger, func(cs *mcp.ClientSession) error {
			for tool, err := range cs.Tools(ctx) {
				if err != nil {
					return err
				}
				if tool.Name == "json_schema_2020_12_tool" {
					return callOK(ctx, cs, "json_schema_echo", map[string]any{"schema": tool.InputSchema})
				}
			}
			return errors.New("the server lists no json_schema_2020_12_tool")
		})
	case "request-metadata":
		// A client that declares every feature, as the checks ask.
		// The server declares no features: connecting and a liveness
		// check are the whole session.
		return session(ctx, serverURL, nil, fullClient(), logger, func(cs *mcp.ClientSession) error {
			return cs.Ping(ctx)
		})
	case "sep-2322-client-request-state":
		// The input_required rounds are the client library's; between
		// rounds another call must carry none of their state.
		opts := fullClient()
		opts.ElicitationHandler = func(ctx context.Context, s *mcp.ClientSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			if _, err := s.CallTool(ctx, "test_mrtr_unrelated", nil); err != nil {
				return nil, err
			}
			return &mcp.ElicitResult{Action: "accept", Content: mcp.ApplyElicitationDefaults(p, map[string]any{})}, nil
		}
		return session(ctx, serverURL, nil, opts, logger, func(cs *mcp.ClientSession) error {
			for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_no_result_type"} {
				if _, err := cs.CallTool(ctx, name, nil); err != nil {
					return err
				}
			}
			return nil
		})
	case "http-custom-headers", "http-invalid-tool-headers":
		// Call the tools the scenario names, with its arguments, or each
		// tool listed; the client library sends Mcp-Param-* headers and
		// leaves out tools whose annotations are invalid.
		var x struct {
			ToolCalls []struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"toolCalls"`
		}
		json.Unmarshal([]byte(contextJSON), &x)
		return session(ctx, serverURL, nil, nil, logger, func(cs *mcp.ClientSession) error {
			listed := map[string]*mcp.Tool{}
			for tool, err := range cs.Tools(ctx) {
				if err != nil {
					return err
				}
				listed[tool.Name] = tool
			}
			if len(x.ToolCalls) > 0 {
				for _, c := range x.ToolCalls {
					if _, err := cs.CallTool(ctx, c.Name, c.Arguments); err != nil {
						return err
					}
				}
				return nil
			}
			for name, tool := range listed {
				if _, err := cs.CallTool(ctx, name, sampleArguments(tool)); err != nil {
					return err
				}
			}
			return nil
		})
	case "json-schema-ref-no-deref":
		// The client lists the tools and never fetches a $ref.
		return session(ctx, serverURL, nil, nil, logger, func(cs *mcp.ClientSession) error {
			for _, err := range cs.Tools(ctx) {
				if err != nil {
					return err
				}
			}
			return nil
		})
	case "sse-retry":
		return session(ctx, serverURL, nil, nil, logger, func(cs *mcp.ClientSession) error {
			return callOK(ctx, cs, "test_reconnection", nil)
		})
	}
	if !strings.HasPrefix(scenario, "auth/") {
		return fmt.Errorf("unknown scenario %q", scenario)
	}
	cfg, err := authConfig(scenario, cc, logger)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: oauthclient.NewTransport(cfg, nil)}
	// What an application does once signed in: list the tools and call
	// one (a call may need more scopes than the listing: step-up).
	return session(ctx, serverURL, hc, nil, logger, func(cs *mcp.ClientSession) error {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		if len(res.Tools) == 0 {
			return nil
		}
		return callOK(ctx, cs, res.Tools[0].Name, nil)
	})
}

// authConfig is the OAuth client configuration an application would use
// against the scenario's server: the suite's authorization server
// redirects at once, so the sign-in needs no person.
func authConfig(scenario string, cc ClientContext, logger *slog.Logger) (oauthclient.Config, error) {
	cfg := oauthclient.Config{
		// Nothing listens here: FollowRedirect reads the code from the
		// redirect without following it.
		RedirectURL:  "http://127.0.0.1:33418/callback",
		Authorize:    oauthclient.FollowRedirect(nil),
		ClientName:   "mcpgate conformance client",
		ClientID:     cc.ClientID,
		ClientSecret: cc.ClientSecret,
		Logger:       logger,
	}
	switch scenario {
	case "auth/basic-cimd":
		cfg.ClientMetadataURL = clientMetadataURL
	case "auth/client-credentials-basic":
		cfg.GrantType = oauthclient.GrantClientCredentials
	case "auth/client-credentials-jwt":
		cfg.GrantType = oauthclient.GrantClientCredentials
		cfg.PrivateKeyPEM, cfg.SigningAlgorithm = cc.PrivateKeyPEM, cc.SigningAlgorithm
	case "auth/cross-app-access-complete-flow", "auth/enterprise-managed-authorization":
		if cc.IDPIDToken == "" || cc.IDPTokenEndpoint == "" {
			return cfg, errors.New("cross-app access needs idp_id_token and idp_token_endpoint in MCP_CONFORMANCE_CONTEXT")
		}
		cfg.GrantType = oauthclient.GrantJWTBearer
		x := &oauthclient.TokenExchange{
			TokenEndpoint: cc.IDPTokenEndpoint,
			ClientID:      cc.IDPClientID,
			SubjectToken:  cc.IDPIDToken,
		}
		cfg.Assertion = x.Assertion()
	}
	return cfg, nil
}

// session connects over Streamable HTTP, runs f and closes.
func session(ctx context.Context, serverURL string, hc *http.Client, opts *mcp.ClientOptions, logger *slog.Logger, f func(*mcp.ClientSession) error) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgate-conformance-client", Version: "1.0.0"}, opts)
	cs, err := client.Connect(ctx, &mcphttp.ClientTransport{Endpoint: serverURL, HTTPClient: hc, Logger: logger})
	if err != nil {
		return err
	}
	ferr := f(cs)
	return errors.Join(ferr, cs.Close())
}

// callOK calls a tool and treats an isError result as a failure.
func callOK(ctx context.Context, cs *mcp.ClientSession, name string, args any) error {
	res, err := cs.CallTool(ctx, name, args)
	if err != nil {
		return fmt.Errorf("calling %s: %w", name, err)
	}
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				text = append(text, t.Text)
			}
		}
		return fmt.Errorf("the tool %s reported an error: %s", name, strings.Join(text, " "))
	}
	return nil
}

// fullClient declares sampling, elicitation and roots, with handlers that
// answer as a cooperative user and model would.
func fullClient() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.ClientSession, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "conformance", Content: []byte(`{"type":"text","text":"ok"}`)}, nil
		},
		ElicitationHandler: func(_ context.Context, _ *mcp.ClientSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: mcp.ApplyElicitationDefaults(p, nil)}, nil
		},
		RootsHandler: func(context.Context, *mcp.ClientSession) (*mcp.ListRootsResult, error) {
			return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///conformance", Name: "conformance"}}}, nil
		},
	}
}

// sampleArguments fills a tool's required arguments with values of their
// types.
func sampleArguments(t *mcp.Tool) map[string]any {
	schema, _ := t.InputSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	args := map[string]any{}
	req, _ := schema["required"].([]any)
	for _, r := range req {
		name, _ := r.(string)
		p, _ := props[name].(map[string]any)
		switch p["type"] {
		case "integer", "number":
			args[name] = 1
		case "boolean":
			args[name] = true
		default:
			args[name] = "test"
		}
	}
	return args
}
