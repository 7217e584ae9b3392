package sqlitefile

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Stores that start together open one new file at once; each must get a
// working database in WAL mode, not SQLITE_BUSY from the race to
// convert the file. The race is rare per round, hence the rounds.
func TestOpeningOneNewFileAtOnce(t *testing.T) {
	const rounds, openers = 100, 4
	for range rounds {
		path := filepath.Join(t.TempDir(), "state.db")
		var wg sync.WaitGroup
		errs := make([]error, openers)
		modes := make([]string, openers)
		for i := range openers {
			wg.Go(func() {
				db, _, err := Open(path, nil)
				if err != nil {
					errs[i] = err
					return
				}
				defer db.Close()
				errs[i] = db.QueryRow("PRAGMA journal_mode").Scan(&modes[i])
			})
		}
		wg.Wait()
		for i := range openers {
			if errs[i] != nil {
				t.Fatalf("opener %d: %v", i, errs[i])
			}
			if modes[i] != "wal" {
				t.Fatalf("opener %d: journal mode %q, want wal", i, modes[i])
			}
		}
	}
}

func TestOpenFindsAFileThatIsNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	db, _, err := Open(path, nil)
	if err == nil {
		db.Close()
		t.Fatal("Open accepted a text file")
	}
	if !strings.Contains(err.Error(), "not a database") {
		t.Errorf("error %q does not say the file is not a database", err)
	}
}

func TestOpenMakesTheFilePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dir", "state.db")
	db, abs, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, p := range []string{abs, filepath.Dir(abs)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want no access for group or others", p, fi.Mode().Perm())
		}
	}
}
