package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

func TestCommandLinesThatCannotMakeAClusterAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // in the error; "" for none
	}{
		{"a cluster", []string{"-n", "3", "--", "mcpgate", "serve", "--addr", "127.0.0.1:{port}", "--redis", "{redis}"}, ""},
		{"no command", []string{"-n", "3"}, "no replica command"},
		{"no port", []string{"--", "mcpgate", "serve", "--redis", "{redis}"}, "has no {port}"},
		{"no replicas", []string{"-n", "0", "--", "x", "{port}"}, "want 1 to 32"},
		{"a relative path", []string{"-path", "mcp", "--", "x", "{port}"}, "want a path such as /mcp"},
		{"redis off but named", []string{"-redis=false", "--", "x", "{port}", "{redis}"}, "-redis=false starts none"},
		{"postgres named but off", []string{"--", "x", "{port}", "--db", "{postgres}"}, "add -postgres"},
		{"postgres on", []string{"-postgres", "--", "x", "{port}", "--db", "{postgres}"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseArgs(tc.args, io.Discard)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestEachReplicaGetsItsOwnPortAndTheSharedServices(t *testing.T) {
	cmd := []string{"mcpgate", "serve", "--addr", "127.0.0.1:{port}", "--redis", "{redis}", "--replica-id", "r{i}", "--db", "{dir}/tasks.db", "{unknown}"}
	got := expand(cmd, map[string]string{"port": "4001", "redis": "redis://127.0.0.1:6379/0", "i": "2", "dir": "/tmp/c"})
	want := []string{"mcpgate", "serve", "--addr", "127.0.0.1:4001", "--redis", "redis://127.0.0.1:6379/0", "--replica-id", "r2", "--db", "/tmp/c/tasks.db", "{unknown}"}
	if !slices.Equal(got, want) {
		t.Errorf("expand:\n got %q\nwant %q", got, want)
	}
	if cmd[3] != "127.0.0.1:{port}" {
		t.Errorf("expand changed its argument: %q", cmd)
	}
}
