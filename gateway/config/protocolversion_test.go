package config

import (
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// The hint for a revision mcpgate does not speak lists those it does,
// newest first, from the library's one list; each of them is accepted.
func TestProtocolVersionHintListsRevisionsNewestFirst(t *testing.T) {
	want := strings.Join(mcp.Versions(), ", ")
	_, err := Parse([]byte(`{"mcpServers": {"a": {"command": "x", "protocolVersion": "2024-01-01"}}}`), "c.json", nil)
	if err == nil || !strings.Contains(err.Error(), "use "+want+`, or "auto" to negotiate`) {
		t.Fatalf("got %v, want a hint listing %s", err, want)
	}
	for _, v := range append([]string{"auto"}, mcp.Versions()...) {
		if _, err := Parse([]byte(`{"mcpServers": {"a": {"command": "x", "protocolVersion": "`+v+`"}}}`), "c.json", nil); err != nil {
			t.Errorf("protocolVersion %q: %v", v, err)
		}
	}
}
