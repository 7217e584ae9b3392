package workpool

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestGoRunsEverything(t *testing.T) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	for range 1000 {
		wg.Add(1)
		Go(func() {
			defer wg.Done()
			mu.Lock()
			n++
			mu.Unlock()
		})
	}
	wg.Wait()
	if n != 1000 {
		t.Fatalf("%d tasks ran, want 1000", n)
	}
}

// A task that blocks does not hold up the next one.
func TestGoNeverQueues(t *testing.T) {
	release := make(chan struct{})
	Go(func() { <-release })
	done := make(chan struct{})
	Go(func() { close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the second task waited for the first")
	}
	close(release)
}

func TestIdleWorkersLeave(t *testing.T) {
	base := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		Go(func() { defer wg.Done(); time.Sleep(time.Millisecond) })
	}
	wg.Wait()
	deadline := time.Now().Add(idleTimeout + 10*time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, want %d: idle workers stayed", runtime.NumGoroutine(), base)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func BenchmarkGo(b *testing.B) {
	done := make(chan struct{})
	for b.Loop() {
		Go(func() { done <- struct{}{} })
		<-done
	}
}

func BenchmarkPlainGo(b *testing.B) {
	done := make(chan struct{})
	for b.Loop() {
		go func() { done <- struct{}{} }()
		<-done
	}
}
