package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/codemode/codemode/internal/pgtest"
	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/postgres"
	"github.com/codemode/codemode/session/sessiontest"
)

func TestPostgresMigrations(t *testing.T) {
	u := pgtest.Schema(t)
	ctx := context.Background()
	sessiontest.OpenAtOnce(t, postgres.Open, u, 4)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if want := migrationFiles(t); conn.QueryRow(ctx, `SELECT count(*) FROM codemode_migrations`).Scan(&n) != nil || n != want {
		t.Fatalf("codemode_migrations has %d rows, want %d", n, want)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO codemode_migrations (version, name) VALUES (99, '0099_future.sql')`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(ctx, u); err == nil || !strings.Contains(err.Error(), "upgrade codemode") {
		t.Fatalf("opening a newer schema: err = %v", err)
	}
}

func TestPostgresSchemaMissing(t *testing.T) {
	u := pgtest.Schema(t)
	u = strings.Replace(u, "search_path=codemode_test_", "search_path=missing_", 1)
	_, err := postgres.Open(context.Background(), u)
	if err == nil || !strings.Contains(err.Error(), "no existing schema") {
		t.Fatalf("OpenPostgres with a missing schema: err = %v", err)
	}
}

// TestPostgresListenerReconnect kills one replica's LISTEN connection; an
// append on another replica still wakes that replica's waiters.
func TestPostgresListenerReconnect(t *testing.T) {
	u := pgtest.Schema(t)
	a, b := sessiontest.Open(t, postgres.Open, u), sessiontest.Open(t, postgres.Open, u)
	ctx := context.Background()
	if err := a.CreateSession(ctx, session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var schema string
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	var killed int
	err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'codemode-listener' AND query LIKE '%' || $1 || '%'`, schema).Scan(&killed)
	if err != nil {
		t.Fatal(err)
	}
	if killed != 2 {
		t.Fatalf("terminated %d listener connections, want 2", killed)
	}
	for after := int64(0); after < 3; after++ {
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			done <- a.Wait(ctx, "s", after)
		}()
		if _, err := b.Append(ctx, "s", ctxEvent("x")); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("Wait(after %d) on a after its listener was killed: %v", after, err)
		}
	}
}

// TestPostgresWriterSurvivesEndedConnections: the server ends the store's
// connections (a restart, a failover, pg_terminate_backend); the next
// writes commit on new ones, once each.
func TestPostgresWriterSurvivesEndedConnections(t *testing.T) {
	u := pgtest.Schema(t) + "&application_name=codemode-test-ended"
	s := sessiontest.Open(t, postgres.Open, u)
	ctx := context.Background()
	if err := s.CreateSession(ctx, session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, strings.Replace(u, "codemode-test-ended", "codemode-test-killer", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for round := 1; round <= 3; round++ {
		var killed int
		if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE application_name = 'codemode-test-ended' AND datname = current_database()`).Scan(&killed); err != nil {
			t.Fatal(err)
		}
		if killed == 0 {
			t.Fatal("no connection of the store was found to end")
		}
		got, err := s.Append(ctx, "s", ctxEvent(fmt.Sprint(round)))
		if err != nil {
			t.Fatalf("round %d: append after the server ended %d connections: %v", round, killed, err)
		}
		if got[0].Seq != int64(round) {
			t.Fatalf("round %d: seq %d", round, got[0].Seq)
		}
	}
	if evs, err := s.Events(ctx, "s", 0, 0); err != nil || len(evs) != 3 {
		t.Fatalf("the log has %d events (%v), want 3: each write once", len(evs), err)
	}
}

// A call id with a NUL byte, which PostgreSQL's text refuses, fails only its
// own write: the other sessions' writes in the same group commit commit.
// (The HTTP API refuses such ids; this is the store's second line.)
func TestPostgresRefusedWriteFailsAlone(t *testing.T) {
	s := sessiontest.Open(t, postgres.Open, pgtest.Schema(t))
	ctx := context.Background()
	const n = 40
	for i := range n {
		if err := s.CreateSession(ctx, session.Session{ID: fmt.Sprint("s", i)}); err != nil {
			t.Fatal(err)
		}
	}
	call := func(id string) session.Event {
		return event(session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: id, Name: "t", Arguments: "{}"})
	}
	for round := 0; ; round++ {
		before := s.Stats()
		var tickets []*session.Ticket
		for i := range n {
			id := fmt.Sprint("c", round, "-", i)
			if i == n/2 {
				id = "bad\x00id"
			}
			tickets = append(tickets, s.Submit(ctx, session.Write{SessionID: fmt.Sprint("s", i), Events: []session.Event{call(id)}}))
		}
		for i, tk := range tickets {
			_, err := tk.Wait(ctx)
			if i == n/2 {
				if !errors.Is(err, session.ErrRefused) || errors.Is(err, session.ErrUnavailable) || !strings.Contains(err.Error(), `"s20"`) {
					t.Fatalf("the write with a NUL: err = %v, want ErrRefused naming its session", err)
				}
			} else if err != nil {
				t.Fatalf("round %d: write to s%d, beside the refused one: %v", round, i, err)
			}
		}
		for i := range n {
			evs, err := s.Events(ctx, fmt.Sprint("s", i), 0, 0)
			want := round + 1
			if i == n/2 {
				want = 0
			}
			if err != nil || len(evs) != want {
				t.Fatalf("s%d has %d events (%v), want %d", i, len(evs), err, want)
			}
		}
		// The refused write shared a transaction with others at least once
		// (else the round proved nothing: try again).
		if after := s.Stats(); after.Failed-before.Failed >= 2 {
			break
		}
		if round == 4 {
			t.Fatal("the write with a NUL never shared a batch")
		}
	}
}

// migrationFiles counts the migrations.
func migrationFiles(t *testing.T) int {
	entries, err := os.ReadDir("migrations")
	if err != nil || len(entries) == 0 {
		t.Fatalf("migrations: %d files, %v", len(entries), err)
	}
	return len(entries)
}

// event returns an event of type typ with payload.
func event(typ string, payload any) session.Event {
	e, err := session.NewEvent(typ, payload)
	if err != nil {
		panic(err) // the payloads of these tests always marshal
	}
	return e
}

// ctxEvent is a user/context event carrying text.
func ctxEvent(text string) session.Event {
	return event(session.TypeUserContext, session.UserContext{Source: "test", Text: text})
}
