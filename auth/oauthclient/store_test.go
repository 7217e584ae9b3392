package oauthclient_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
)

func TestStores(t *testing.T) {
	dir := t.TempDir()
	stores := map[string]oauthclient.TokenStore{
		"memory": oauthclient.NewMemoryStore(),
		"file":   oauthclient.NewFileStore(filepath.Join(dir, "sub", "tokens.json")),
	}
	for name, st := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if tok, err := st.Load(ctx, "https://a.example/mcp"); tok != nil || err != nil {
				t.Fatalf("empty store: %v %v", tok, err)
			}
			exp := time.Now().Add(time.Hour).Truncate(time.Second)
			a := &oauthclient.Token{AccessToken: "a", RefreshToken: "r", Expiry: exp, Scopes: []string{"x"}, Resource: "https://a.example/mcp"}
			b := &oauthclient.Token{AccessToken: "b"}
			if err := st.Save(ctx, "https://a.example/mcp", a); err != nil {
				t.Fatal(err)
			}
			if err := st.Save(ctx, "https://b.example/mcp", b); err != nil {
				t.Fatal(err)
			}
			a.Scopes[0] = "changed after saving"
			got, err := st.Load(ctx, "https://a.example/mcp")
			if err != nil || got.AccessToken != "a" || got.RefreshToken != "r" || !got.Expiry.Equal(exp) || got.Scopes[0] != "x" {
				t.Fatalf("loaded %+v, %v", got, err)
			}
			if err := st.Save(ctx, "https://a.example/mcp", nil); err != nil {
				t.Fatal(err)
			}
			if got, _ := st.Load(ctx, "https://a.example/mcp"); got != nil {
				t.Errorf("deleted token still there")
			}
			if got, _ := st.Load(ctx, "https://b.example/mcp"); got == nil || got.AccessToken != "b" {
				t.Errorf("the other token is gone: %v", got)
			}
		})
	}
	fi, err := os.Stat(filepath.Join(dir, "sub", "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(filepath.Join(dir, "sub"))
	if di.Mode().Perm() != 0o700 {
		t.Errorf("token directory mode %v, want 0700", di.Mode().Perm())
	}
}

func TestFileStoreCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	os.WriteFile(path, []byte("{not json"), 0o600)
	if _, err := oauthclient.NewFileStore(path).Load(context.Background(), "x"); err == nil {
		t.Error("a corrupt file was read without complaint")
	}
}

func TestTokenExpired(t *testing.T) {
	now := time.Now()
	tests := []struct {
		expiry time.Time
		want   bool
	}{
		{time.Time{}, false},
		{now.Add(time.Hour), false},
		{now.Add(10 * time.Second), true}, // within the margin
		{now.Add(-time.Second), true},
	}
	for _, tt := range tests {
		if got := (&oauthclient.Token{Expiry: tt.expiry}).Expired(now); got != tt.want {
			t.Errorf("Expired with expiry %v = %v", tt.expiry, got)
		}
	}
}
