package gopool

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// A function handed to Go runs; a goroutine that has finished one runs the
// next rather than a new goroutine starting, and the pool's goroutines count
// as idle while they wait.
func TestGoReusesWaitingGoroutines(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	Go(wg.Done)
	wg.Wait()
	waitIdle(t, 1)
	before := runtime.NumGoroutine()
	for range 100 {
		wg.Add(1)
		Go(wg.Done)
		wg.Wait()
		waitIdle(t, 1)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines before 100 sequential functions, %d after", before, n)
	}
}

// Functions handed to Go run concurrently, each on its own goroutine.
func TestGoRunsConcurrently(t *testing.T) {
	const n = 8
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	for range n {
		Go(func() { started.Done(); release.Wait() })
	}
	started.Wait() // every function runs while the others block
	release.Done()
}

func waitIdle(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); Idle() < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines idle, want %d", Idle(), n)
		}
		time.Sleep(time.Millisecond)
	}
}
