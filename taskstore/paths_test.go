package taskstore

import (
	"errors"
	"path/filepath"
	"runtime"
	"testing"
)

func TestDefaultPath(t *testing.T) {
	home := func() (string, error) { return "/home/ann", nil }
	noHome := func() (string, error) { return "", errors.New("$HOME is not defined") }
	for _, tt := range []struct {
		name string
		goos string
		env  map[string]string
		home func() (string, error)
		want string // "" means an error is expected
	}{
		{"linux", "linux", nil, home, "/home/ann/.local/share/mcpgate/tasks.db"},
		{"linux, XDG_DATA_HOME", "linux", map[string]string{"XDG_DATA_HOME": "/data"}, home, "/data/mcpgate/tasks.db"},
		{"linux, relative XDG_DATA_HOME is ignored", "linux", map[string]string{"XDG_DATA_HOME": "data"}, home, "/home/ann/.local/share/mcpgate/tasks.db"},
		{"freebsd", "freebsd", nil, home, "/home/ann/.local/share/mcpgate/tasks.db"},
		{"linux without a home", "linux", nil, noHome, ""},
		{"linux without a home, XDG_DATA_HOME", "linux", map[string]string{"XDG_DATA_HOME": "/data"}, noHome, "/data/mcpgate/tasks.db"},
		{"macOS", "darwin", map[string]string{"XDG_DATA_HOME": "/data"}, home, "/home/ann/Library/Application Support/mcpgate/tasks.db"},
		{"windows", "windows", map[string]string{"LOCALAPPDATA": "/Users/ann/AppData/Local"}, home, "/Users/ann/AppData/Local/mcpgate/tasks.db"},
		{"windows without LocalAppData", "windows", nil, home, ""},
		{"override", "linux", map[string]string{EnvPath: "/tmp/t.db", "XDG_DATA_HOME": "/data"}, noHome, "/tmp/t.db"},
		{"override, windows", "windows", map[string]string{EnvPath: "tasks.db"}, noHome, "tasks.db"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if runtime.GOOS == "windows" && tt.env["XDG_DATA_HOME"] != "" {
				t.Skip("an absolute Unix path is not absolute on Windows")
			}
			got, err := defaultPath(tt.goos, func(k string) string { return tt.env[k] }, tt.home)
			if tt.want == "" {
				if err == nil {
					t.Errorf("got %q, want an error", got)
				}
				return
			}
			if want := filepath.FromSlash(tt.want); got != want || err != nil {
				t.Errorf("got %q, %v; want %q", got, err, want)
			}
		})
	}
}

func TestDefaultPathHonoursEnvironment(t *testing.T) {
	t.Setenv(EnvPath, "/somewhere/else.db")
	if got, err := DefaultPath(); got != "/somewhere/else.db" || err != nil {
		t.Errorf("DefaultPath() = %q, %v", got, err)
	}
}
