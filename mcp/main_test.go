package mcp

import (
	"io"
	"log/slog"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		runChild(mode)
	}
	// Servers under test log to slog.Default; keep test output readable
	// unless MCPGATE_TEST_LOG is set.
	if os.Getenv("MCPGATE_TEST_LOG") == "" {
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	os.Exit(m.Run())
}
