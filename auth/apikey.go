package auth

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
)

// APIKeys checks static API keys sent as bearer tokens. Only SHA-256
// hashes of the keys are kept, so a leaked key file grants nothing.
type APIKeys struct {
	byHash map[string]string // hex SHA-256 of the key → key name
}

// LoadAPIKeys reads a key file: one "name:sha256:hex" per line (made by
// `mcpgate auth new-key` or [NewAPIKey]); blank lines and # comments are
// ignored.
func LoadAPIKeys(path string) (*APIKeys, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	k, err := ParseAPIKeys(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ParseAPIKeys reads key lines from r. Key names are refused '#', ':',
// '/', white space and unprintable characters, with the line that has
// one.
func ParseAPIKeys(r io.Reader) (*APIKeys, error) {
	k := &APIKeys{byHash: map[string]string{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok := strings.Cut(line, ":")
		hexHash, isSHA := strings.CutPrefix(rest, "sha256:")
		if !ok || name == "" || !isSHA {
			return nil, fmt.Errorf("line %d: want name:sha256:hex (never the key itself)", n)
		}
		if err := checkName("key", name); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if b, err := hex.DecodeString(hexHash); err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("line %d: key %q: the hash is not 64 hex digits", n, name)
		}
		k.byHash[strings.ToLower(hexHash)] = name
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(k.byHash) == 0 {
		return nil, fmt.Errorf("no keys")
	}
	return k, nil
}

// Lookup returns the name of a key, or "" if it is unknown. The lookup is
// by hash, so no comparison leaks how much of a guess was right.
func (k *APIKeys) Lookup(key string) string {
	return k.byHash[HashAPIKey(key)]
}

// HashAPIKey returns the hex SHA-256 of a key, as key files hold it.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// NewAPIKey returns a random key (256 bits, prefixed "mcpg_" so that
// secret scanners can spot it) and its key-file line.
func NewAPIKey(name string) (key, line string) {
	var b [32]byte
	rand.Read(b[:])
	key = "mcpg_" + base64.RawURLEncoding.EncodeToString(b[:])
	return key, name + ":sha256:" + HashAPIKey(key)
}
