package testservice

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

const waitForTest = 10 * time.Second // a bound on a hang

func TestRedisAnswersAndComesBackOnTheSameURL(t *testing.T) {
	tests := []struct {
		name     string
		opts     RedisOptions
		down     func(*RedisServer)
		wantKept bool
	}{
		{"stopped, without persistence", RedisOptions{}, (*RedisServer).Stop, false},
		{"killed, without persistence", RedisOptions{}, (*RedisServer).Kill, false},
		{"killed, with the append-only file", RedisOptions{AppendOnly: true}, (*RedisServer).Kill, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitForTest)
			defer cancel()
			r := RedisWith(t, tt.opts)
			url := r.URL()
			if !strings.HasPrefix(url, "redis://127.0.0.1:") || !strings.HasSuffix(url, "/0") {
				t.Fatalf("URL() = %q, want redis://127.0.0.1:PORT/0", url)
			}
			opt, err := redis.ParseURL(url)
			if err != nil {
				t.Fatal(err)
			}
			opt.MaxRetries = -1 // a down server must show as an error here
			rdb := redis.NewClient(opt)
			defer rdb.Close()
			if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
				t.Fatalf("SET: %v", err)
			}
			if got, err := rdb.Get(ctx, "k").Result(); err != nil || got != "v" {
				t.Fatalf("GET = %q, %v; want v", got, err)
			}

			tt.down(r)
			if err := rdb.Ping(ctx).Err(); err == nil {
				t.Fatal("PING succeeded with the server down")
			}
			r.Start()
			if r.URL() != url {
				t.Fatalf("URL after Start = %q, want %q", r.URL(), url)
			}
			got, err := rdb.Get(ctx, "k").Result()
			switch {
			case tt.wantKept && (err != nil || got != "v"):
				t.Fatalf("GET after restart = %q, %v; want v kept", got, err)
			case !tt.wantKept && !errors.Is(err, redis.Nil):
				t.Fatalf("GET after restart = %q, %v; want no key (nothing persisted)", got, err)
			}
		})
	}
}

func TestPostgresKeepsCommittedRowsAcrossARestartOnTheSameURL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitForTest)
	defer cancel()
	s := Postgres(t)
	url := s.URL()
	if !strings.HasPrefix(url, "postgres://mcpgate@127.0.0.1:") || !strings.HasSuffix(url, "/mcpgate?sslmode=disable") {
		t.Fatalf("URL() = %q, want postgres://mcpgate@127.0.0.1:PORT/mcpgate?sslmode=disable", url)
	}
	query := func(sql string) (string, error) {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return "", err
		}
		defer c.Close(ctx)
		var out string
		err = c.QueryRow(ctx, sql).Scan(&out)
		return out, err
	}
	exec := func(sql string) error {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		return err
	}
	if got, err := query("SELECT 1::text"); err != nil || got != "1" {
		t.Fatalf("SELECT 1 = %q, %v", got, err)
	}
	if err := exec("CREATE TABLE t (v text); INSERT INTO t VALUES ('kept')"); err != nil {
		t.Fatalf("writing a row: %v", err)
	}

	s.Stop()
	if _, err := query("SELECT 1::text"); err == nil {
		t.Fatal("a query succeeded with the server stopped")
	}
	s.Start()
	if s.URL() != url {
		t.Fatalf("URL after Start = %q, want %q", s.URL(), url)
	}
	if got, err := query("SELECT v FROM t"); err != nil || got != "kept" {
		t.Fatalf("the row after a restart = %q, %v; want kept", got, err)
	}
}

func TestPostgresCreateDatabaseIsSeparate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitForTest)
	defer cancel()
	s := Postgres(t)
	other := s.CreateDatabase("other-db")
	c, err := pgx.Connect(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var name string
	if err := c.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil || name != "other-db" {
		t.Fatalf("current_database() = %q, %v; want other-db", name, err)
	}
}

// named is a backend that answers with its name, and drops the
// connection without an answer at /drop, as a process killed
// mid-request does.
func named(t *testing.T, name string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/drop" {
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		io.WriteString(w, name)
	}))
	t.Cleanup(s.Close)
	return s
}

func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	return string(b)
}

func TestHAProxyBalancesRoundRobinWithoutStickiness(t *testing.T) {
	a, b := named(t, "a"), named(t, "b")
	h := HAProxy(t, []string{a.URL, b.Listener.Addr().String()}, nil)
	c := &http.Client{Timeout: waitForTest} // keep-alive: one client connection
	var got []string
	for range 6 {
		got = append(got, get(t, c, h.URL()+"/"))
	}
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Fatalf("backends in turn = %v, want them alternating", got)
		}
	}
}

func TestHAProxyRetriesARequestThatFindsItsBackendDeadOnAnother(t *testing.T) {
	tests := []struct {
		name string
		path string
		kill bool // close backend a before the requests
	}{
		{"a backend that refuses connections", "/", true},
		{"a backend that drops the connection without answering", "/drop", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := named(t, "a")
			b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "b")
			}))
			t.Cleanup(b.Close)
			h := HAProxy(t, []string{a.URL, b.URL}, nil)
			if tt.kill {
				a.Close()
			}
			c := &http.Client{Timeout: waitForTest}
			for i := range 4 {
				if got := get(t, c, h.URL()+tt.path); got != "b" {
					t.Fatalf("request %d answered by %q, want b", i, got)
				}
			}
		})
	}
}

func TestHAProxyComesBackAndReloadsOnTheSameURL(t *testing.T) {
	a, b := named(t, "a"), named(t, "b")
	h := HAProxy(t, []string{a.URL}, &HAProxyOptions{HealthPath: "/"})
	url := h.URL()
	c := &http.Client{Timeout: waitForTest, Transport: &http.Transport{DisableKeepAlives: true}}
	if got := get(t, c, url); got != "a" {
		t.Fatalf("got %q from a", got)
	}
	h.Stop()
	if _, err := c.Get(url); err == nil {
		t.Fatal("a request succeeded with haproxy stopped")
	}
	h.Start()
	if got := get(t, c, url); got != "a" || h.URL() != url {
		t.Fatalf("after Start: %q from %s, want a from %s", got, h.URL(), url)
	}
	h.Reload([]string{b.URL})
	for i := range 4 {
		if got := get(t, c, url); got != "b" {
			t.Fatalf("request %d after Reload answered by %q, want b", i, got)
		}
	}
}

func TestMissingBinaryNamesTheInstallCommand(t *testing.T) {
	tests := []struct {
		require   string
		wantFatal bool
	}{
		{"", false},
		{"0", false},
		{"1", true},
	}
	for _, tt := range tests {
		t.Run(RequireEnv+"="+tt.require, func(t *testing.T) {
			msg, fatal := missing("haproxy", "haproxy", tt.require)
			if fatal != tt.wantFatal {
				t.Errorf("fatal = %v, want %v", fatal, tt.wantFatal)
			}
			if !strings.Contains(msg, "apt-get install -y haproxy") {
				t.Errorf("message %q does not say how to install it", msg)
			}
		})
	}
}

func TestPostgresBinDirsAreNewestFirst(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"9.6", "16", "15"} {
		if err := os.MkdirAll(filepath.Join(root, v, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, d := range postgresBinDirs(root) {
		got = append(got, filepath.Base(filepath.Dir(d)))
	}
	if want := []string{"16", "15", "9.6"}; !slices.Equal(got, want) {
		t.Fatalf("postgresBinDirs = %v, want %v", got, want)
	}
}

func TestHAProxyConfigRejectsBackendsItCannotBalance(t *testing.T) {
	tests := []struct {
		backend string
		wantErr string
	}{
		{"127.0.0.1:8080", ""},
		{"http://127.0.0.1:8080/mcp", ""},
		{"https://127.0.0.1:8443", "only http://"},
		{"127.0.0.1", "want host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.backend, func(t *testing.T) {
			cfg, err := haproxyConfig(1, "/s", []string{tt.backend}, HAProxyOptions{RetryOn: "conn-failure", MaxConn: 1})
			if tt.wantErr == "" {
				if err != nil || !strings.Contains(cfg, "server r0 127.0.0.1:8080 check") {
					t.Fatalf("config = %q, %v", cfg, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
}

// The servers listen on loopback only: nothing else on the machine can
// reach a test's data.
func TestServersListenOnLoopbackOnly(t *testing.T) {
	r := Redis(t)
	_, port, _ := net.SplitHostPort(r.Addr())
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skip(err)
	}
	for _, a := range addrs {
		ip, _, _ := net.ParseCIDR(a.String())
		if ip == nil || ip.IsLoopback() || ip.To4() == nil {
			continue
		}
		c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.String(), port), time.Second)
		if err == nil {
			c.Close()
			t.Fatalf("redis answered on %s:%s", ip, port)
		}
	}
}
