package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
)

// checkpointStore opens a SQLite store whose checkpointer waits on the
// returned channel before each checkpoint, until it is closed.
func checkpointStore(t *testing.T) (st *Store, path string, release func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "log.db")
	st, err := Open(context.Background(), path, session.Options{Durability: session.DurabilityProcess})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hold := make(chan struct{})
	st.checkpoints.hold = hold // before the first commit, which is what wakes it
	return st, path, func() { close(hold) }
}

// writeRuns commits n writes shaped like trivial runs, each in a new session.
func writeRuns(t *testing.T, st *Store, from, n int) {
	t.Helper()
	call, err := session.NewEvent(session.TypeToolCall, json.RawMessage(`{"turn":1,"step":1,"call_id":"run_1","name":"run_code","arguments":"{\"code\":\"return 1\"}"}`))
	if err != nil {
		t.Fatal(err)
	}
	result, err := session.NewEvent(session.TypeToolResult, json.RawMessage(`{"call_id":"run_1","content":[{"type":"text","text":"1"}],"is_error":false}`))
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < from+n; i++ {
		id := fmt.Sprintf("019ad0c1%024x", i)
		w := session.Write{SessionID: id, Create: &session.Session{ID: id, Scope: "default"}, Events: []session.Event{call, result}}
		if _, err := st.Submit(context.Background(), w).Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A commit does not checkpoint at SQLite's default threshold: with the
// checkpointer held, the WAL grows past 1,000 pages and the database file
// gets none of it; released, the checkpointer copies the WAL into the file.
func TestCheckpointsAreOffTheCommitPath(t *testing.T) {
	st, path, release := checkpointStore(t)
	dbBefore := fileSize(t, path)
	writeRuns(t, st, 0, 400) // about 3,200 pages
	if wal := fileSize(t, path+"-wal"); wal < 2*sqliteCheckpointPages*sqlitePageSize {
		t.Fatalf("the WAL is %d bytes after 400 commits: a commit checkpointed", wal)
	}
	if db := fileSize(t, path); db != dbBefore {
		t.Fatalf("the database file grew %d → %d bytes with the checkpointer held", dbBefore, db)
	}
	release()
	deadline := time.Now().Add(10 * time.Second)
	for st.CheckpointStats().Checkpoints == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint ran: %+v", st.CheckpointStats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if db := fileSize(t, path); db <= dbBefore {
		t.Fatalf("after a checkpoint the database file is %d bytes, as before", db)
	}
	if s := st.CheckpointStats(); s.Failed != 0 || s.Busy <= 0 {
		t.Fatalf("stats %+v", s)
	}
	// What it copied reads back.
	evs, err := st.Events(context.Background(), fmt.Sprintf("019ad0c1%024x", 7), 0, 0)
	if err != nil || len(evs) != 2 {
		t.Fatalf("events %v %v", evs, err)
	}
}

// When the checkpointer cannot keep up (here: never runs), the writer still
// checkpoints at its far bound, and the WAL starts over instead of growing.
func TestWALIsBoundedWithoutTheCheckpointer(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 40 MB")
	}
	st, path, _ := checkpointStore(t)
	writeRuns(t, st, 0, 1500) // about 12,000 pages
	const bound = (sqliteInlineCheckpointPages + 2*sqliteCommitPages) * (sqlitePageSize + 24)
	if wal := fileSize(t, path+"-wal"); wal > bound {
		t.Fatalf("the WAL is %d bytes, past the writer's bound of %d", wal, bound)
	}
	if st.CheckpointStats().Checkpoints != 0 {
		t.Fatal("the held checkpointer ran")
	}
}

// Close stops a checkpointer that is waiting, and one that never started.
func TestCloseStopsTheCheckpointer(t *testing.T) {
	st, _, _ := checkpointStore(t)
	writeRuns(t, st, 0, 200) // wakes it: it waits on the hold
	done := make(chan error, 1)
	go func() { done <- st.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for a held checkpointer")
	}
	mem, err := Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	if s := mem.CheckpointStats(); s != (CheckpointStats{}) {
		t.Fatalf("an in-memory store checkpoints: %+v", s)
	}
	if err := mem.Close(); err != nil {
		t.Fatal(err)
	}
}
