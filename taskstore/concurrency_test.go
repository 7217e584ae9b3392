package taskstore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
)

// appendTag adds tag to a task in a read-modify-write: the new list is
// computed from the list read in the same transaction, so a lost update
// shows up as a missing tag.
func appendTag(ctx context.Context, s *Store, id, tag string) error {
	_, err := s.Modify(ctx, id, func(t *Task) error {
		t.Tags = append(t.Tags, tag)
		return nil
	})
	return err
}

// hammer runs n goroutines that each append a unique tag to the task id
// and create a task, spreading them over stores, and fails on any error.
func hammer(t *testing.T, stores []*Store, id string, n int, prefix string) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		s := stores[i%len(stores)]
		wg.Go(func() {
			if err := appendTag(ctx, s, id, fmt.Sprintf("%s%02d", prefix, i)); err != nil {
				errs <- err
			}
			if _, err := s.Create(ctx, NewTask{Title: fmt.Sprintf("%s task %d", prefix, i)}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func checkTags(t *testing.T, s *Store, id string, want int) {
	t.Helper()
	task, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(task.Tags) != want {
		t.Errorf("the shared task has %d tags, want %d: updates were lost", len(task.Tags), want)
	}
	sorted := slices.Clone(task.Tags)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(task.Tags) {
		t.Errorf("duplicate tags: %q", task.Tags)
	}
}

func checkTotal(t *testing.T, s *Store, want int) {
	t.Helper()
	r, err := s.List(context.Background(), ListOptions{})
	if err != nil || r.Total != want {
		t.Errorf("%d tasks stored, want %d (%v)", r.Total, want, err)
	}
}

func testConcurrentWritesOneStore(t *testing.T, b backend) {
	s := openStore(t, b)
	shared := mustCreate(t, s, NewTask{Title: "shared"})
	hammer(t, []*Store{s}, shared.ID, 50, "g")
	checkTags(t, s, shared.ID, 50)
	checkTotal(t, s, 51)
}

// Two Stores on one database have separate connection pools and
// separate in-process write queues, so only the database's locking (the
// SQLite file's, the advisory lock in Postgres) keeps them apart, as it
// must for two processes.
func testConcurrentWritesTwoStores(t *testing.T, b backend) {
	path := b.fresh(t)
	var stores []*Store
	for range 2 {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	shared := mustCreate(t, stores[0], NewTask{Title: "shared"})
	hammer(t, stores, shared.ID, 50, "g")
	for _, s := range stores {
		checkTags(t, s, shared.ID, 50)
		checkTotal(t, s, 51)
	}
}

const (
	envHelperDB   = "TASKSTORE_TEST_HELPER_DB"
	envHelperTask = "TASKSTORE_TEST_HELPER_TASK"
)

// testConcurrentWritesTwoProcesses runs this test binary a second time
// as a writer (TestHelperWriterProcess) against the same database while
// this process writes too.
func testConcurrentWritesTwoProcesses(t *testing.T, b backend) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	path := b.fresh(t)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	shared := mustCreate(t, s, NewTask{Title: "shared"})

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envHelperDB+"="+path, envHelperTask+"="+shared.ID)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Start writing only once the child has opened the store, so that
	// the two really overlap.
	r := bufio.NewReader(stdout)
	if line, err := r.ReadString('\n'); line != "ready\n" {
		cmd.Wait()
		t.Fatalf("writer process: %q, %v", line, err)
	}
	hammer(t, []*Store{s}, shared.ID, 25, "parent")
	rest, _ := io.ReadAll(r)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("writer process: %v\n%s", err, rest)
	}
	checkTags(t, s, shared.ID, 50)
	checkTotal(t, s, 51)
}

func TestHelperWriterProcess(t *testing.T) {
	path, id := os.Getenv(envHelperDB), os.Getenv(envHelperTask)
	if path == "" {
		t.Skip("run by testConcurrentWritesTwoProcesses")
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Println("ready")
	hammer(t, []*Store{s}, id, 25, "child")
}
