package session_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/postgres"
	"github.com/codemode/codemode/session/sessiontest"
	"github.com/codemode/codemode/session/sqlite"
)

// batchStore is a store that reports its group commits.
type batchStore interface {
	session.Store
	Stats() session.CommitStats
}

// TestBatchOneTransaction holds the database's write lock from outside, so
// that the store's writer stalls on its first write while a burst of writes
// queues behind it; released, the burst commits as one transaction, in
// which the writes that cannot commit fail alone.
func TestBatchOneTransaction(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "log.db")
		s := sessiontest.Open(t, sqlite.Open, path)
		raw, err := sql.Open("sqlite", "file://"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		testBatch(t, s, func() (release func()) {
			conn, err := raw.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
				t.Fatal(err)
			}
			return func() {
				conn.ExecContext(context.Background(), "COMMIT")
				conn.Close()
			}
		})
	})
	t.Run("postgres", func(t *testing.T) {
		u := postgresSchema(t)
		s := sessiontest.Open(t, postgres.Open, u)
		testBatch(t, s, func() (release func()) {
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions WHERE id = 'blocker' FOR UPDATE`); err != nil {
				t.Fatal(err)
			}
			return func() {
				tx.Commit(ctx)
				conn.Close(ctx)
			}
		})
	})
}

func testBatch(t *testing.T, s batchStore, block func() (release func())) {
	ctx := context.Background()
	for _, id := range []string{"blocker", "a", "b"} {
		if err := s.CreateSession(ctx, session.Session{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	release := block()
	before := s.Stats()
	first := s.Submit(ctx, session.Write{SessionID: "blocker", Events: []session.Event{ctxEvent("blocked")}})
	// Wait until the writer has taken the first write (it stalls on the lock).
	for deadline := time.Now().Add(20 * time.Second); s.Stats().Queued > 0; {
		if time.Now().After(deadline) {
			t.Fatal("the writer never took the first write")
		}
		time.Sleep(time.Millisecond)
	}
	if waitTicket(first, 10*time.Millisecond) {
		t.Fatal("the first write committed past the lock")
	}
	ev := func(text string) []session.Event { return []session.Event{ctxEvent(text)} }
	writes := []struct {
		w    session.Write
		want error
	}{
		{session.Write{SessionID: "a", Events: ev("a1")}, nil},
		{session.Write{SessionID: "ghost", Events: ev("x")}, session.ErrNotFound},
		{session.Write{SessionID: "b", Events: ev("b1")}, nil},
		{session.Write{SessionID: "a", Create: &session.Session{}, Events: ev("x")}, session.ErrExists},
		{session.Write{SessionID: "new", Create: &session.Session{}, Events: ev("n1")}, nil},
		{session.Write{SessionID: "new", Events: ev("n2"), Checkpoint: &session.Checkpoint{State: json.RawMessage(`2`)}}, nil},
		{session.Write{SessionID: "a", Lease: &session.Lease{Owner: "nobody", Token: 1}, Events: ev("x")}, session.ErrLeaseLost},
		{session.Write{SessionID: "a", Events: ev("a2")}, nil},
		{session.Write{SessionID: "b", Checkpoint: &session.Checkpoint{Seq: 9, State: json.RawMessage(`9`)}}, errPast},
		{session.Write{SessionID: "b", Events: ev("b2")}, nil},
	}
	tickets := make([]*session.Ticket, len(writes))
	for i, w := range writes {
		tickets[i] = s.Submit(ctx, w.w)
	}
	release()
	for i, w := range writes {
		_, err := tickets[i].Wait(ctx)
		switch {
		case w.want == nil && err != nil:
			t.Errorf("write %d: %v", i, err)
		case w.want == errPast && (err == nil || errors.Is(err, session.ErrNotFound)):
			t.Errorf("write %d: err = %v, want the checkpoint refused", i, err)
		case w.want != nil && w.want != errPast && !errors.Is(err, w.want):
			t.Errorf("write %d: err = %v, want %v", i, err, w.want)
		}
	}
	if _, err := first.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	after := s.Stats()
	if commits, n := after.Commits-before.Commits, after.Writes-before.Writes; commits != 2 || n != int64(len(writes))+1 {
		t.Fatalf("the burst of %d writes took %d commits for %d writes, want 2 (the stalled one and the burst)", len(writes), commits, n)
	}
	for id, want := range map[string][]string{"a": {"a1", "a2"}, "b": {"b1", "b2"}, "new": {"n1", "n2"}} {
		evs, err := s.Events(ctx, id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := sessiontest.Texts(t, evs); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("session %s holds %v, want %v", id, got, want)
		}
	}
	if cp, err := s.LoadCheckpoint(ctx, "new"); err != nil || cp.Seq != 2 {
		t.Fatalf("checkpoint of new = %+v, %v", cp, err)
	}
}

// errPast stands for the refusal of a checkpoint past the log.
var errPast = errors.New("checkpoint past the log")

// waitTicket reports whether the ticket resolves within d.
func waitTicket(tk *session.Ticket, d time.Duration) bool {
	select {
	case <-tk.Done():
		return true
	case <-time.After(d):
		return false
	}
}
