package session_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/codemode/codemode/internal/pgtest"
	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/postgres"
	"github.com/codemode/codemode/session/sessiontest"
	"github.com/codemode/codemode/session/sqlite"
)

func TestMemoryConformance(t *testing.T) {
	sessiontest.RunConformance(t, func(t *testing.T) session.Store { return session.NewMemory() })
}

// postgresSchema returns a URL to a schema of the test's own (see pgtest).
func postgresSchema(t testing.TB) string { return pgtest.Schema(t) }

func TestOpenURL(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		url     string
		want    string // the store's type, or "" for an error
		errText string
	}{
		{"memory://", "*session.Memory", ""},
		{"sqlite://" + filepath.Join(dir, "a.db"), "*sqlite.Store", ""},
		{"sqlite://:memory:", "*sqlite.Store", ""},
		{"sqlite://" + filepath.Join(dir, "with space ?#%.db"), "*sqlite.Store", ""},
		{"SQLite://" + filepath.Join(dir, "b.db"), "*sqlite.Store", ""},
		{"sqlite://", "", "names no file"},
		{"sqlite://" + filepath.Join(dir, "missing", "c.db"), "", "does not exist"},
		{"codemode.db", "", "no scheme"},
		{"mysql://x", "", `unknown scheme "mysql"`},
		{"memory://x", "", "takes no path"},
		{"postgres://%zz", "", "postgres URL"},
	}
	for _, tt := range tests {
		s, err := session.Open(context.Background(), tt.url)
		if tt.want == "" {
			if err == nil || !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("Open(%q): err = %v, want one containing %q", tt.url, err, tt.errText)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(%q): %v", tt.url, err)
			continue
		}
		if got := typeName(s); got != tt.want {
			t.Errorf("Open(%q) = %s, want %s", tt.url, got, tt.want)
		}
		s.Close()
	}
	if _, err := os.Stat(filepath.Join(dir, "with space ?#%.db")); err != nil {
		t.Errorf("a path with URL-special characters was not used verbatim: %v", err)
	}
}

func TestOpenPostgresURL(t *testing.T) {
	u := postgresSchema(t)
	s, err := session.Open(context.Background(), strings.Replace(u, "postgres://", "postgresql://", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*postgres.Store); !ok {
		t.Fatalf("Open(postgresql://…) = %T", s)
	}
}

func typeName(s session.Store) string {
	switch s.(type) {
	case *session.Memory:
		return "*session.Memory"
	case *sqlite.Store:
		return "*sqlite.Store"
	case *postgres.Store:
		return "*postgres.Store"
	}
	return "unknown"
}

func TestErrorsAreDistinct(t *testing.T) {
	errs := []error{session.ErrNotFound, session.ErrExists, session.ErrClosed}
	for i, a := range errs {
		for j, b := range errs {
			if (i == j) != errors.Is(a, b) {
				t.Errorf("errors.Is(%v, %v) = %v", a, b, errors.Is(a, b))
			}
		}
	}
}

// TestUpgradeFromV1 opens a database written by the first schema: the
// sessions get their last seq and last update from their events, and their
// logs continue where they stopped.
func TestUpgradeFromV1(t *testing.T) {
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	eventTime := created.Add(time.Hour)
	v1, err := os.ReadFile(filepath.Join("sqlite", "migrations", "0001_init.sql"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "v1.db")
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			string(v1),
			`CREATE TABLE codemode_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
			`INSERT INTO codemode_migrations VALUES (1, '0001_init.sql', 0)`,
			fmt.Sprintf(`INSERT INTO sessions VALUES ('full', 'default', %d), ('empty', 'default', %d)`, created.UnixMicro(), created.UnixMicro()),
			fmt.Sprintf(`INSERT INTO events VALUES ('full', 1, 'user/context', %d, NULL, '{}'), ('full', 2, 'user/context', %d, NULL, '{}'),
				('full', 3, 'user/context', %d, NULL, '{}')`, created.UnixMicro(), created.Add(2*time.Hour).UnixMicro(), eventTime.UnixMicro()),
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
		checkUpgraded(t, sessiontest.Open(t, sqlite.Open, path), created, eventTime)
	})
	t.Run("postgres", func(t *testing.T) {
		u := postgresSchema(t)
		v1, err := os.ReadFile(filepath.Join("postgres", "migrations", "0001_init.sql"))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		for _, q := range []string{
			string(v1),
			`CREATE TABLE codemode_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
			`INSERT INTO codemode_migrations (version, name) VALUES (1, '0001_init.sql')`,
		} {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := conn.Exec(ctx, `INSERT INTO sessions (id, scope, created_at, last_seq) VALUES ('full', 'default', $1, 3), ('empty', 'default', $1, 0)`, created); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO events VALUES ('full', 1, 'user/context', $1, NULL, '{}'), ('full', 2, 'user/context', $3, NULL, '{}'),
			('full', 3, 'user/context', $2, NULL, '{}')`, created, eventTime, created.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		checkUpgraded(t, sessiontest.Open(t, postgres.Open, u), created, eventTime)
	})
}

func checkUpgraded(t *testing.T, s session.Store, created, eventTime time.Time) {
	t.Helper()
	ctx := context.Background()
	full, err := s.GetSession(ctx, "full")
	if err != nil || full.LastSeq != 3 || !full.UpdatedAt.Equal(eventTime) || !full.CreatedAt.Equal(created) {
		t.Fatalf("upgraded session = %+v, %v; want LastSeq 3, UpdatedAt %v (its last event's time)", full, err, eventTime)
	}
	empty, err := s.GetSession(ctx, "empty")
	if err != nil || empty.LastSeq != 0 || !empty.UpdatedAt.Equal(created) {
		t.Fatalf("upgraded empty session = %+v, %v; want UpdatedAt = CreatedAt", empty, err)
	}
	if got, err := s.Append(ctx, "full", ctxEvent("v2")); err != nil || got[0].Seq != 4 {
		t.Fatalf("append after the upgrade = %+v, %v; want seq 4", got, err)
	}
	if p, err := s.ListSessions(ctx, session.SessionFilter{}); err != nil || len(p.Sessions) != 2 {
		t.Fatalf("ListSessions after the upgrade = %+v, %v", p, err)
	}
}

// Every store bounds reads by bytes (see the backends' tests for theirs).
var _ session.BoundedReader = (*session.Memory)(nil)

// unbounded hides a store's EventsWithin.
type unbounded struct{ session.Store }

// Pages reads a log in pages of at most limit events and, from a bounded
// reader, of about maxBytes; it reads each event once, ends with the log
// (also when the log ends on a full page), stops when fn says so, and reports
// an unknown session.
func TestPages(t *testing.T) {
	ctx := context.Background()
	mem := session.NewMemory()
	defer mem.Close()
	if err := mem.CreateSession(ctx, session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	var evs []session.Event
	for i := 0; i < 10; i++ {
		e, err := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "t", Text: strings.Repeat("x", 100)})
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	if _, err := mem.Append(ctx, "s", evs...); err != nil {
		t.Fatal(err)
	}
	size := len(evs[0].Data)
	for _, tc := range []struct {
		name            string
		store           session.Store
		after           int64
		limit, maxBytes int
		want            []int // events per page
	}{
		{"by count", mem, 0, 4, 0, []int{4, 4, 2}},
		{"ends on a full page", mem, 0, 5, 0, []int{5, 5}},
		{"by bytes", mem, 0, 100, 3*size - 1, []int{3, 3, 3, 1}},
		{"bytes then count", mem, 2, 2, 3 * size, []int{2, 2, 2, 2}},
		{"all at once", mem, 0, 0, 0, []int{10}},
		{"after the end", mem, 10, 3, 0, nil},
		{"unbounded store, by count only", unbounded{mem}, 0, 4, size, []int{4, 4, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			next := tc.after + 1
			err := session.Pages(ctx, tc.store, "s", tc.after, tc.limit, tc.maxBytes, func(page []session.Event) bool {
				for _, e := range page {
					if e.Seq != next {
						t.Fatalf("seq %d, want %d", e.Seq, next)
					}
					next++
				}
				got = append(got, len(page))
				return true
			})
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("pages %v (%v), want %v", got, err, tc.want)
			}
		})
	}
	pages := 0
	if err := session.Pages(ctx, mem, "s", 0, 2, 0, func([]session.Event) bool { pages++; return pages < 2 }); err != nil || pages != 2 {
		t.Fatalf("fn stopped after %d pages (%v), want 2", pages, err)
	}
	if err := session.Pages(ctx, mem, "ghost", 0, 2, 0, func([]session.Event) bool { return true }); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}
