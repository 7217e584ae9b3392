package taskstore

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// EnvPath names the environment variable that, when set and not empty,
// overrides [DefaultPath]: a file's path, or a postgres:// URL.
const EnvPath = "MCPGATE_TASKS_DB"

// DefaultPath returns where mcpgate keeps its tasks when not told
// otherwise: the file named by $MCPGATE_TASKS_DB if that is set, else
// tasks.db in an mcpgate folder of the user's data directory:
//
//	Linux, BSD:  $XDG_DATA_HOME/mcpgate/tasks.db, or ~/.local/share/mcpgate/tasks.db
//	macOS:       ~/Library/Application Support/mcpgate/tasks.db
//	Windows:     %LocalAppData%\mcpgate\tasks.db
//
// Tasks are data, not configuration, so this is not os.UserConfigDir.
// Nothing is created; [Open] does that.
func DefaultPath() (string, error) {
	return defaultPath(runtime.GOOS, os.Getenv, os.UserHomeDir)
}

// defaultPath is DefaultPath with the platform and environment passed in,
// so that every platform's rule can be tested on any one.
func defaultPath(goos string, getenv func(string) string, home func() (string, error)) (string, error) {
	if p := getenv(EnvPath); p != "" {
		return p, nil
	}
	var dir string
	switch goos {
	case "windows":
		dir = getenv("LOCALAPPDATA")
		if dir == "" {
			return "", errors.New("%LocalAppData% is not set")
		}
	case "darwin", "ios":
		h, err := home()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(h, "Library", "Application Support")
	default:
		// The XDG spec says a relative $XDG_DATA_HOME is invalid and must
		// be ignored.
		if x := getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
			dir = x
			break
		}
		h, err := home()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(h, ".local", "share")
	}
	return filepath.Join(dir, "mcpgate", "tasks.db"), nil
}
