package oauthclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Token is an access token with what is needed to refresh it later, also
// after a restart: where the token endpoint is and as which client to
// call it. Its String, GoString and LogValue methods hide the secrets, so
// a Token printed or logged by mistake leaks nothing.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Scopes were granted: the token response's scope, or the requested
	// scopes when the response did not say (RFC 6749 §5.1).
	Scopes []string `json:"scopes,omitempty"`
	// Resource is the RFC 8707 resource the token was issued for.
	Resource string `json:"resource,omitempty"`

	Issuer        string `json:"issuer,omitempty"`
	TokenEndpoint string `json:"token_endpoint,omitempty"`
	ClientID      string `json:"client_id,omitempty"`
	// ClientSecret is the secret of a dynamically registered client (a
	// configured secret is not stored).
	ClientSecret string `json:"client_secret,omitempty"`
	AuthMethod   string `json:"token_endpoint_auth_method,omitempty"`
}

// expiryMargin refreshes a token a little before it expires, so that it
// does not expire on its way to the server.
const expiryMargin = 30 * time.Second

// Expired reports whether the token has expired or is about to; a token
// without an expiry never expires on the client's side.
func (t *Token) Expired(now time.Time) bool {
	return !t.Expiry.IsZero() && now.Add(expiryMargin).After(t.Expiry)
}

func (t *Token) hasScopes(need []string) bool {
	for _, s := range need {
		if !slices.Contains(t.Scopes, s) {
			return false
		}
	}
	return true
}

func (t *Token) clone() *Token {
	if t == nil {
		return nil
	}
	c := *t
	c.Scopes = slices.Clone(t.Scopes)
	return &c
}

// String describes the token without its secrets.
func (t *Token) String() string {
	if t == nil {
		return "<nil>"
	}
	exp := "no expiry"
	if !t.Expiry.IsZero() {
		exp = "expires " + t.Expiry.Format(time.RFC3339)
	}
	return fmt.Sprintf("oauthclient.Token{resource %q, scopes %q, %s, refresh token %t}", t.Resource, t.Scopes, exp, t.RefreshToken != "")
}

// GoString keeps %#v from printing the secrets.
func (t *Token) GoString() string { return t.String() }

// LogValue keeps slog from printing the secrets.
func (t *Token) LogValue() slog.Value {
	if t == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(
		slog.String("resource", t.Resource),
		slog.Any("scopes", t.Scopes),
		slog.Time("expiry", t.Expiry),
		slog.Bool("refreshable", t.RefreshToken != ""),
	)
}

// TokenStore keeps tokens between requests and, for a persistent store,
// between runs. Keys are the canonical URL of the MCP server (scheme and
// host lower-cased, no query or fragment), which is the resource the
// token is for.
type TokenStore interface {
	// Load returns the stored token, or nil and no error when there is
	// none.
	Load(ctx context.Context, resource string) (*Token, error)
	// Save stores tok, replacing any earlier one; a nil tok deletes it.
	Save(ctx context.Context, resource string, tok *Token) error
}

// MemoryStore is a [TokenStore] that forgets everything when the process
// ends: the default.
type MemoryStore struct {
	mu   sync.Mutex
	toks map[string]*Token
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{toks: map[string]*Token{}} }

// Load implements TokenStore.
func (m *MemoryStore) Load(_ context.Context, resource string) (*Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.toks[resource].clone(), nil
}

// Save implements TokenStore.
func (m *MemoryStore) Save(_ context.Context, resource string, tok *Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if tok == nil {
		delete(m.toks, resource)
	} else {
		m.toks[resource] = tok.clone()
	}
	return nil
}

// FileStore is a [TokenStore] in one JSON file, readable by its owner only
// (0600): for command-line tools that should not ask the user to sign in
// on every run. Several FileStores (or processes) sharing a file see each
// other's writes, but the last writer wins on the same resource.
type FileStore struct {
	path string
	mu   sync.Mutex
}

// NewFileStore returns a store in the file at path; the file and its
// directory (0700) are created on the first Save.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

// Load implements TokenStore.
func (f *FileStore) Load(_ context.Context, resource string) (*Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.read()
	if err != nil {
		return nil, err
	}
	return all[resource], nil
}

// Save implements TokenStore.
func (f *FileStore) Save(_ context.Context, resource string, tok *Token) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.read()
	if err != nil {
		return err
	}
	if tok == nil {
		delete(all, resource)
	} else {
		all[resource] = tok.clone()
	}
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return fmt.Errorf("oauthclient: token store: %w", err)
	}
	// Write a temporary file and rename it, so a crash never leaves half a
	// file and a reader never sees one. CreateTemp makes it 0600.
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".tokens-*")
	if err != nil {
		return fmt.Errorf("oauthclient: token store: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename this fails harmlessly
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("oauthclient: token store: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("oauthclient: token store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("oauthclient: token store: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("oauthclient: token store: %w", err)
	}
	return nil
}

func (f *FileStore) read() (map[string]*Token, error) {
	all := map[string]*Token{}
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return all, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oauthclient: token store: %w", err)
	}
	if len(data) == 0 {
		return all, nil
	}
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("oauthclient: token store %s is not valid JSON (delete it to sign in again): %w", f.path, err)
	}
	for k, v := range all {
		if v == nil {
			delete(all, k)
		}
	}
	return all, nil
}
