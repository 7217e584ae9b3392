package testservice

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgresUser is the superuser that initdb creates, and the user of
// every URL; the cluster trusts local connections, so no password.
const postgresUser = "mcpgate"

// PostgresServer is a Postgres cluster owned by a test, with a database
// named mcpgate.
type PostgresServer struct {
	tb   testing.TB
	p    *process
	port int
}

// Postgres creates a cluster in a temporary directory with initdb and
// starts it on a free loopback port, with fsync off (a test's data need
// not survive a power cut); the test's cleanup stops it and removes the
// directory. Postgres refuses to run as root, so under root the cluster
// runs as the postgres user that Debian's package creates.
func Postgres(tb testing.TB) *PostgresServer {
	tb.Helper()
	bins := postgresBinDirs("/usr/lib/postgresql")
	initdb := binary(tb, "initdb", "postgresql", bins...)
	server := binary(tb, "postgres", "postgresql", filepath.Dir(initdb))
	dir, cred := postgresDir(tb)
	data := filepath.Join(dir, "data")
	out, err := runAs(cred, initdb, "-D", data, "-U", postgresUser, "--auth=trust",
		"--no-sync", "--encoding=UTF8", "--locale=C")
	if err != nil {
		tb.Fatalf("testservice: initdb: %v\n%s", err, out)
	}
	s := &PostgresServer{tb: tb, p: newProcess(tb, server, dir, cred, syscall.SIGINT)}
	s.p.ready = func() error { return s.ping("postgres") }
	s.port = startOnFreePort(tb, s.p, func(port int) []string {
		s.port = port
		return []string{"-D", data, "-p", strconv.Itoa(port),
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=200"}
	})
	s.exec("postgres", "CREATE DATABASE "+postgresUser)
	return s
}

// postgresDir makes the cluster's directory. Under root it is a new
// directory of its own in the system's temporary directory, given to the
// postgres user: a test's TempDir is private to root.
func postgresDir(tb testing.TB) (string, *syscall.Credential) {
	tb.Helper()
	if os.Geteuid() != 0 {
		return tb.TempDir(), nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		msg, fatal := missing("the postgres user", "postgresql", os.Getenv(RequireEnv))
		if fatal {
			tb.Fatalf("%s: %v", msg, err)
		}
		tb.Skipf("%s: %v", msg, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "mcpgate-pg-")
	if err != nil {
		tb.Fatalf("testservice: %v", err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, uid, gid); err != nil {
		tb.Fatalf("testservice: %v", err)
	}
	return dir, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

func runAs(cred *syscall.Credential, path string, args ...string) ([]byte, error) {
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = sysProcAttr(cred)
	return cmd.CombinedOutput()
}

// URL is the mcpgate database's URL,
// postgres://mcpgate@127.0.0.1:PORT/mcpgate?sslmode=disable.
func (s *PostgresServer) URL() string { return s.DatabaseURL(postgresUser) }

// DatabaseURL is the URL of the database name in this cluster.
func (s *PostgresServer) DatabaseURL(name string) string {
	u := url.URL{Scheme: "postgres", User: url.User(postgresUser),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)), Path: "/" + name,
		RawQuery: "sslmode=disable"}
	return u.String()
}

// CreateDatabase creates a new, empty database in the cluster and
// returns its URL: cheaper than a cluster per test, as isolated.
func (s *PostgresServer) CreateDatabase(name string) string {
	s.tb.Helper()
	s.exec(postgresUser, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return s.DatabaseURL(name)
}

// Stop shuts the server down (a fast shutdown, SIGINT: clients are
// disconnected, committed data is kept) and waits for it to exit.
func (s *PostgresServer) Stop() { s.p.stop(s.p.quit) }

// Start starts a stopped server again on the same port and data, and
// waits until it answers. A running server is left alone.
func (s *PostgresServer) Start() {
	s.tb.Helper()
	if err := s.p.start(); err != nil {
		s.tb.Fatalf("testservice: restarting postgres on port %d: %v", s.port, err)
	}
}

func (s *PostgresServer) ping(db string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.DatabaseURL(db))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return c.Ping(ctx)
}

func (s *PostgresServer) exec(db, sql string) {
	s.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, err := pgx.Connect(ctx, s.DatabaseURL(db))
	if err == nil {
		defer c.Close(context.Background())
		_, err = c.Exec(ctx, sql)
	}
	if err != nil {
		s.tb.Fatalf("testservice: postgres: %s: %v", sql, fmt.Sprint(err))
	}
}
