package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/sessiontest"
)

// A full disk (here SQLite's max_page_count) fails writes with
// ErrUnavailable and is reported by WriteErr until a write commits again;
// reads keep working and nothing committed is lost.
func TestSQLiteFullDiskIsUnavailable(t *testing.T) {
	ctx := context.Background()
	s := sessiontest.Open(t, Open, filepath.Join(t.TempDir(), "log.db"))
	if err := s.CreateSession(ctx, session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "s", event("before")); err != nil {
		t.Fatal(err)
	}
	pragma := func(q string) {
		t.Helper()
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		if _, err := s.writer.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var pages int64
	if err := s.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	pragma("PRAGMA max_page_count = " + strconv.FormatInt(pages, 10))
	_, err := s.Append(ctx, "s", event(strings.Repeat("x", 1<<20)))
	if !errors.Is(err, session.ErrUnavailable) || errors.Is(err, session.ErrRefused) {
		t.Fatalf("append to a full database: %v, want ErrUnavailable", err)
	}
	if err := s.WriteErr(); !errors.Is(err, session.ErrUnavailable) {
		t.Fatalf("WriteErr after a full disk: %v", err)
	}
	if evs, err := s.Events(ctx, "s", 0, 0); err != nil || len(evs) != 1 {
		t.Fatalf("read while full: %d events, %v", len(evs), err)
	}
	pragma("PRAGMA max_page_count = 1073741823")
	if _, err := s.Append(ctx, "s", event("after")); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteErr(); err != nil {
		t.Fatalf("WriteErr after a write committed: %v", err)
	}
	if evs, err := s.Events(ctx, "s", 0, 0); err != nil || len(evs) != 2 {
		t.Fatalf("after: %d events, %v", len(evs), err)
	}
}

// event is a user/context event carrying text.
func event(text string) session.Event {
	e, err := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "t", Text: text})
	if err != nil {
		panic(err)
	}
	return e
}
