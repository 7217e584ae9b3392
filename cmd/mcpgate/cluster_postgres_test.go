package main

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testservice"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Issue 23: the built-in task store on Postgres behind three `serve`
// replicas sharing Redis and HAProxy. Four clients create tasks in a loop,
// each call landing on whichever replica; meanwhile Redis is stopped and
// started again. Every task a client was told it created is in Postgres
// afterwards, and reads through every replica find it: nothing written
// is lost, and no call hangs.
func TestBuiltinTasksOnPostgresSurviveARedisRestart(t *testing.T) {
	rd := testservice.RedisWith(t, testservice.RedisOptions{AppendOnly: true})
	pg := testservice.Postgres(t)
	front := startCluster(t, 3, serveReady, func(i int) []string {
		return []string{"serve", "--addr", "127.0.0.1:0", "--redis", rd.URL(), "--db", pg.URL(), "--replica-id", "r" + strconv.Itoa(i), "--log-level", "warn"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitFor)
	defer cancel()
	connect := func() *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "pg-test", Version: "1"}, &mcp.ClientOptions{ProtocolVersion: mcp.Version20251125}).
			Connect(ctx, &mcphttp.ClientTransport{Endpoint: front, DisableLegacyFallback: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	type made struct{ ID, Title string }
	var mu sync.Mutex
	var created []made
	failed := 0
	var sessions []*mcp.ClientSession
	for range 4 {
		sessions = append(sessions, connect())
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w, cs := range sessions {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				title := "task " + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				res, err := cs.CallTool(ctx, "create_task", map[string]any{"title": title})
				mu.Lock()
				if err != nil || res.IsError {
					failed++
				} else {
					var task struct{ ID string }
					b, _ := json.Marshal(res.StructuredContent)
					json.Unmarshal(b, &task)
					created = append(created, made{task.ID, title})
				}
				mu.Unlock()
				time.Sleep(5 * time.Millisecond) // a pace, so the table stays small
			}
		})
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(created)
	}
	waitCount := func(n int) {
		for deadline := time.Now().Add(waitFor); count() < n; {
			if time.Now().After(deadline) {
				t.Fatalf("only %d tasks created, want %d", count(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitCount(20)
	rd.Stop()
	waitCount(count() + 20) // calls go on while Redis is down
	rd.Start()
	waitCount(count() + 20)
	close(stop)
	wg.Wait()
	t.Logf("%d tasks created, %d calls failed; Redis was down for part of it", len(created), failed)
	// Every task reads back, through every replica in turn.
	cs := connect()
	for _, m := range created {
		res, err := cs.CallTool(ctx, "get_task", map[string]any{"id": m.ID})
		if err != nil || res.IsError {
			t.Fatalf("get_task %s (%q): %v %+v", m.ID, m.Title, err, res)
		}
	}
}
