package auth

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// BasicUsers checks HTTP Basic credentials against bcrypt hashes.
//
// bcrypt is slow on purpose (tens of milliseconds a check), and a client
// sends the same credentials on every request, so credentials that
// verified are remembered for a few minutes by their SHA-256 (as Apache's
// mod_authn_socache does); a wrong password always pays the full cost.
type BasicUsers struct {
	hashes map[string][]byte
	// dummy is compared against when the user is unknown, so that a wrong
	// name takes as long as a wrong password of a typical user: it has the
	// median cost of the file's hashes. It is made on first use, since
	// bcrypt at load would slow every start.
	dummy func() []byte

	mu       sync.Mutex
	verified map[[sha256.Size]byte]time.Time
}

const (
	basicCacheTTL  = 5 * time.Minute
	basicCacheSize = 4096
)

// MinBcryptCost is the lowest bcrypt cost a user file may hold. Cheaper
// hashes are refused at load: they are quick to crack from a leaked file,
// and they answer so much faster than the others that they tell a prober
// which names exist.
const MinBcryptCost = 10

// LoadBasicUsers reads a user file: one "name:bcrypt-hash" per line (the
// htpasswd -B format, made by `mcpgate auth hash-password` or
// [HashPassword]); blank lines and lines starting with # are ignored.
func LoadBasicUsers(path string) (*BasicUsers, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	u, err := ParseBasicUsers(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return u, nil
}

// ParseBasicUsers reads user lines from r. It refuses, with the line, a
// hash of a cost below [MinBcryptCost], a name given twice, and a name
// holding '#', ':', '/', white space or unprintable characters.
func ParseBasicUsers(r io.Reader) (*BasicUsers, error) {
	u := &BasicUsers{hashes: map[string][]byte{}, verified: map[[sha256.Size]byte]time.Time{}}
	lines := map[string]int{}
	var costs []int
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, hash, ok := strings.Cut(line, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("line %d: want name:bcrypt-hash", n)
		}
		if err := checkName("user", name); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if prev, dup := lines[name]; dup {
			return nil, fmt.Errorf("line %d: user %q is already on line %d", n, name, prev)
		}
		cost, err := bcrypt.Cost([]byte(hash))
		if err != nil {
			return nil, fmt.Errorf("line %d: user %q: not a bcrypt hash (make one with `mcpgate auth hash-password`)", n, name)
		}
		if cost < MinBcryptCost {
			return nil, fmt.Errorf("line %d: user %q: the bcrypt cost is %d, below the least accepted, %d; make a new hash with `mcpgate auth hash-password`", n, name, cost, MinBcryptCost)
		}
		lines[name] = n
		costs = append(costs, cost)
		u.hashes[name] = []byte(hash)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(u.hashes) == 0 {
		return nil, fmt.Errorf("no users")
	}
	slices.Sort(costs)
	median := costs[len(costs)/2] // the higher middle one of an even count
	u.dummy = sync.OnceValue(func() []byte {
		// A random password: nobody can sign in as an unknown user.
		var pw [16]byte
		rand.Read(pw[:])
		h, _ := bcrypt.GenerateFromPassword(pw[:], median)
		return h
	})
	return u, nil
}

// Check reports whether name and password match.
func (u *BasicUsers) Check(name, password string) bool {
	hash, ok := u.hashes[name]
	if !ok {
		bcrypt.CompareHashAndPassword(u.dummy(), []byte(password))
		return false
	}
	// The hash covers the stored bcrypt hash too, so an entry never
	// outlives a password change in a reloaded file.
	key := sha256.Sum256([]byte(name + "\x00" + password + "\x00" + string(hash)))
	now := time.Now()
	u.mu.Lock()
	at, hit := u.verified[key]
	u.mu.Unlock()
	if hit && now.Sub(at) < basicCacheTTL {
		return true
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil {
		return false
	}
	u.mu.Lock()
	if len(u.verified) >= basicCacheSize {
		clear(u.verified)
	}
	u.verified[key] = now
	u.mu.Unlock()
	return true
}

// HashPassword returns the bcrypt hash of a password for a user file.
func HashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	return string(h), err
}
