package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 20, logs a person (or a collector) can read: --log-format json
// writes one JSON object a line; the HTTP banner names the configuration
// and how many servers it has; a bad format is refused.
func TestServeLogFormatAndBanner(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{"notes":{"command":"/nonexistent/notes-server"},"more":{"command":"/nonexistent/more"}}}`), 0o600)
	p := startHTTP(t, "--config", cfg, "--log-format", "json")
	var banner map[string]any
	for _, line := range strings.Split(p.log(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("a log line is not JSON: %s", line)
			continue
		}
		if m["msg"] == "mcpgate serving Streamable HTTP" {
			banner = m
		}
	}
	if banner == nil || banner["config"] != cfg || banner["servers"] != float64(2) {
		t.Errorf("the banner: %v\n%s", banner, p.log())
	}
	if !strings.Contains(p.log(), "mcpgate gateway: 2 servers from "+cfg) {
		t.Errorf("the banner lacks the configuration:\n%s", p.log())
	}
	out, err := runBriefly("serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "t.db"), "--log-format", "xml")
	if err == nil || !strings.Contains(out, `--log-format "xml": use text or json`) {
		t.Errorf("--log-format xml: %v %s", err, out)
	}
}
