package redact_test

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/mcpgate/mcpgate/internal/redact"
)

func ExampleString() {
	fmt.Println(redact.String("curl -u ann:hunter2 -H 'Authorization: Bearer t0k3n' https://api.example.com/?api_key=k1&q=go"))
	fmt.Println(redact.String("DATABASE_URL=postgres://app:s3cret@db:5432/prod npx server --token=ghp_0123456789abcdefghij0123456789abcdef"))
	// Output:
	// curl -u ann:[redacted] -H 'Authorization: Bearer [redacted]' https://api.example.com/?api_key=[redacted]&q=go
	// DATABASE_URL=postgres://app:[redacted]@db:5432/prod npx server --token=[redacted]
}

func ExampleValue() {
	args := map[string]any{
		"repo":       "mcpgate",
		"max_tokens": 1024,
		"api_key":    "k-123",
		"headers":    map[string]any{"X-Api-Key": "k-456", "Accept": "text/plain"},
		"cmd":        "git clone https://x-access-token:gha-777@github.com/o/r",
	}
	fmt.Println(redact.Value(args))
	// Output:
	// map[api_key:[redacted] cmd:git clone https://x-access-token:[redacted]@github.com/o/r headers:map[Accept:text/plain X-Api-Key:[redacted]] max_tokens:1024 repo:mcpgate]
}

func ExampleNewHandler() {
	log := slog.New(redact.NewHandler(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a fixed output for the example
			}
			return a
		},
	})))
	log.Info("calling upstream", "url", "https://u:pw@h/mcp", "password", "hunter2", "tokens", 12)
	// Output:
	// level=INFO msg="calling upstream" url=https://u:[redacted]@h/mcp password=[redacted] tokens=12
}
