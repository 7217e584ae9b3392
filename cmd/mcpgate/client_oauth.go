package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
)

// oauthAvailable says whether --oauth exists (messages suggest it).
const oauthAvailable = true

// oauthSignInTime is how long the first request may wait for a person to
// sign in, when --timeout is shorter.
const oauthSignInTime = 5 * time.Minute

func registerOAuthFlag(fl *pflag.FlagSet, p *bool) {
	fl.BoolVar(p, "oauth", false, "sign in with OAuth when the server asks (URL targets): opens a browser ($BROWSER, else the system's) and keeps the token in "+oauthTokenFileHint())
}

func oauthTokenFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("--oauth: finding the config directory for the token file: %w", err)
	}
	return filepath.Join(dir, "mcpgate", "oauth-tokens.json"), nil
}

func oauthTokenFileHint() string {
	if p, err := oauthTokenFile(); err == nil {
		return p
	}
	return "the user config directory"
}

// oauthHTTPClient returns an HTTP client that obtains, stores and sends
// OAuth tokens for endpoint, and a function that releases the port the
// browser is sent back to.
func oauthHTTPClient(endpoint string) (*http.Client, func(), error) {
	path, err := oauthTokenFile()
	if err != nil {
		return nil, nil, err
	}
	la, err := oauthclient.NewLoopbackAuthorizer(0, func(authURL string) error {
		return openBrowser(endpoint, authURL)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("--oauth: %w", err)
	}
	tr := oauthclient.NewTransport(oauthclient.Config{
		ServerURL:   endpoint,
		ClientName:  "mcpgate CLI",
		RedirectURL: la.RedirectURL(),
		Authorize:   la.Authorize,
		Store:       oauthclient.NewFileStore(path),
		Logger:      slog.Default(),
	}, nil)
	return &http.Client{Transport: tr}, func() { la.Close() }, nil
}

// openBrowser shows the sign-in page: the address on stderr, always, and
// in a browser when one can be started ($BROWSER, else xdg-open, open or
// the Windows URL handler). The command is run without a shell.
func openBrowser(server, authURL string) error {
	printSignIn(server, authURL, true)
	var argv []string
	if b := os.Getenv("BROWSER"); b != "" {
		first, _, _ := strings.Cut(b, string(os.PathListSeparator))
		argv = strings.Fields(first)
		found := false
		for i, a := range argv {
			if strings.Contains(a, "%s") {
				argv[i], found = strings.ReplaceAll(a, "%s", authURL), true
			}
		}
		if !found {
			argv = append(argv, authURL)
		}
	} else {
		switch runtime.GOOS {
		case "darwin":
			argv = []string{"open", authURL}
		case "windows":
			argv = []string{"rundll32", "url.dll,FileProtocolHandler", authURL}
		default:
			argv = []string{"xdg-open", authURL}
		}
	}
	if len(argv) == 0 {
		return nil
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		slog.Debug("could not start a browser", "command", argv[0], "error", err)
		return nil // the address is on stderr
	}
	go cmd.Wait()
	return nil
}

// printSignIn shows the sign-in address on stderr, alone on its line.
func printSignIn(server, authURL string, launching bool) {
	also := ""
	if launching {
		also = " (mcpgate tries to open it for you)"
	}
	fmt.Fprintf(os.Stderr, "To sign in to %s, open this address in a browser%s:\n  %s\n", server, also, authURL)
}

// explainOAuth explains a failed OAuth sign-in, or returns nil.
func explainOAuth(err error, u string) error {
	if !errors.Is(err, oauthclient.ErrAuthorization) {
		return nil
	}
	msg := err.Error()
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.HasPrefix(e.Error(), oauthclient.ErrAuthorization.Error()) {
			msg = e.Error()
			break
		}
	}
	msg = strings.TrimPrefix(msg, oauthclient.ErrAuthorization.Error()+": ")
	return fmt.Errorf("OAuth sign-in to %s failed: %s", u, msg)
}
