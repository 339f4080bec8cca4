package mcp

import (
	"fmt"
	"testing"
	"time"
)

// A task is forgotten, and cancelled when it still runs, once its ttl has
// passed; a session keeps at most maxTasksPerSession, the oldest going
// first; another session's task is not found.
func TestTaskStoreExpiryAndBounds(t *testing.T) {
	var s taskStore
	cancelled := false
	old := &task{id: "old", mcpSession: "m", created: time.Now().Add(-2 * time.Hour), ttl: time.Hour,
		cancel: func() { cancelled = true }, done: make(chan struct{}), status: taskWorking}
	s.add(old)
	fresh := &task{id: "fresh", mcpSession: "m", created: time.Now(), ttl: time.Hour, cancel: func() {}, done: make(chan struct{}), status: taskWorking}
	s.add(fresh)
	if s.get("old", "m") != nil || !cancelled {
		t.Fatalf("a task past its ttl: found %v, cancelled %v", s.get("old", "m") != nil, cancelled)
	}
	if s.get("fresh", "m") != fresh || s.get("fresh", "other") != nil {
		t.Fatal("a task is found by its own session only")
	}
	for i := range maxTasksPerSession {
		s.add(&task{id: fmt.Sprint("t", i), mcpSession: "m", created: time.Now().Add(time.Duration(i+1) * time.Millisecond), ttl: time.Hour,
			cancel: func() {}, done: make(chan struct{}), status: taskWorking})
	}
	if s.get("fresh", "m") != nil || s.get("t0", "m") == nil || s.get(fmt.Sprint("t", maxTasksPerSession-1), "m") == nil {
		t.Fatal("past maxTasksPerSession the oldest task goes first")
	}
	if n := len(s.list("m", &HTTPHandler{})); n != maxTasksPerSession {
		t.Fatalf("%d tasks listed, want %d", n, maxTasksPerSession)
	}
}
