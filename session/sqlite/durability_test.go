package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	driver "modernc.org/sqlite"

	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/sessiontest"
)

// A file store flushes with fdatasync where the system has one (the switch
// is process-wide in modernc.org/sqlite), as SQLite's Linux builds do.
func TestSQLiteFlushesWithFdatasync(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("fdatasync is only switched on where SQLite has it; this test knows Linux (%s)", runtime.GOOS)
	}
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "log.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !driver.FdatasyncEnabled() {
		t.Fatal("SQLite flushes with fsync(2), not fdatasync(2)")
	}
}

// The durability setting reaches every connection that commits writes;
// leases commit without a flush (see SQLite).
func TestSQLiteDurability(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		d    session.Durability
		want int // PRAGMA synchronous: 2 FULL, 1 NORMAL
	}{{"", 2}, {session.DurabilityFull, 2}, {session.DurabilityProcess, 1}} {
		s, err := Open(ctx, filepath.Join(t.TempDir(), "log.db"), session.Options{Durability: tc.d})
		if err != nil {
			t.Fatal(err)
		}
		// Hold several connections at once so that each is a different one.
		for i := 0; i < 3; i++ {
			conn, err := s.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var v int
			if err := conn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&v); err != nil || v != tc.want {
				t.Fatalf("durability %q: connection %d has synchronous=%d (%v), want %d", tc.d, i, v, err, tc.want)
			}
		}
		// Leases lower it for their statement only.
		var v int
		err = s.leaseExec(ctx, func(q sqliteConn) error { return q.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&v) })
		if err != nil || v != 1 {
			t.Fatalf("a lease statement runs with synchronous=%d (%v), want 1 (NORMAL)", v, err)
		}
		if err := s.writer.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&v); err != nil || v != tc.want {
			t.Fatalf("the writer has synchronous=%d (%v) after a lease, want %d", v, err, tc.want)
		}
		s.Close()
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "log.db"), session.Options{Durability: "sometimes"}); err == nil || !strings.Contains(err.Error(), "want full or process") {
		t.Fatalf("a bad durability: err = %v", err)
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "log.db"), session.Options{}, session.Options{}); err == nil {
		t.Fatal("two Options accepted")
	}
}

// A store opens ready: the first read and the first commit after a start
// find a connection with their statements prepared, instead of opening
// and preparing one on a caller's time.
func TestSQLiteOpensWarm(t *testing.T) {
	ctx := context.Background()
	s := sessiontest.Open(t, Open, filepath.Join(t.TempDir(), "log.db"))
	open := s.db.Stats().OpenConnections
	if idle := s.db.Stats().Idle; idle < 1 {
		t.Fatalf("no idle reader after open (%d open)", open)
	}
	if _, err := s.GetSession(ctx, "missing"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("GetSession: %v", err)
	}
	if err := s.CreateSession(ctx, session.Session{ID: "s1", Scope: "default"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "s1", session.Event{Type: session.TypeToolCall, Data: []byte(`{"call_id":"c1"}`)}); err != nil {
		t.Fatal(err)
	}
	if events, err := s.Events(ctx, "s1", 0, 0); err != nil || len(events) != 1 {
		t.Fatalf("Events: %v %v", events, err)
	}
	if st := s.db.Stats(); st.OpenConnections != open {
		t.Fatalf("the first read and commit opened connections: %d open, was %d", st.OpenConnections, open)
	}
}
