package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/sessiontest"
)

// A write's consecutive events without a call id share rows of at most maxPackEvents events
// (and maxPackBytes of data); a tool/call or tool/result has a row of its own, with its call id.
func TestSQLitePacksEventsWithoutCallIDs(t *testing.T) {
	ctx := context.Background()
	s := sessiontest.Open(t, Open, filepath.Join(t.TempDir(), "log.db"))
	call, _ := session.NewEvent(session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "run_code", Arguments: "{}"})
	result, _ := session.NewEvent(session.TypeToolResult, session.ToolResult{CallID: "c1"})
	evs := []session.Event{call}
	for i := 0; i < 150; i++ {
		e, _ := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "t", Text: fmt.Sprint(i)})
		evs = append(evs, e)
	}
	big, _ := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "t", Text: strings.Repeat("x", maxPackBytes-20)})
	evs = append(evs, big, result)
	if _, err := s.Submit(ctx, session.Write{SessionID: "s", Create: &session.Session{ID: "s"}, Events: evs}).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	type row struct {
		seq, n int64
		callID sql.NullString
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, n, call_id FROM events WHERE session_id = 's' ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.seq, &r.n, &r.callID); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	rows.Close()
	// A row's seq is its last event's; the big event fits no pack, nor does
	// the result after it.
	want := []row{{1, 1, sql.NullString{String: "c1", Valid: true}}, {65, 64, sql.NullString{}}, {129, 64, sql.NullString{}}, {151, 22, sql.NullString{}}, {152, 1, sql.NullString{}}, {153, 1, sql.NullString{String: "c1", Valid: true}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows (seq, n, call_id) %v, want %v", got, want)
	}
	read, err := s.Events(ctx, "s", 0, 0)
	if err != nil || len(read) != len(evs) {
		t.Fatalf("read %d events (%v), want %d", len(read), err, len(evs))
	}
	if open, err := s.OpenCalls(ctx); err != nil || len(open) != 0 {
		t.Fatalf("open calls %v %v", open, err)
	}
	// A call whose result is packed is closed; one without a result is open,
	// and its call id is used either way.
	call2, _ := session.NewEvent(session.TypeToolCall, session.ToolCall{Turn: 1, Step: 2, CallID: "c2", Name: "run_code", Arguments: "{}"})
	nested, _ := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "t", Text: "n"})
	if _, err := s.Append(ctx, "s", call2, nested); err != nil {
		t.Fatal(err)
	}
	call3, _ := session.NewEvent(session.TypeToolCall, session.ToolCall{Turn: 1, Step: 3, CallID: "c3", Name: "run_code", Arguments: "{}"})
	result3, _ := session.NewEvent(session.TypeToolResult, session.ToolResult{CallID: "c3"})
	if _, err := s.Append(ctx, "s", call3, nested, nested, result3); err != nil {
		t.Fatal(err)
	}
	var n int64
	var callID string
	if err := s.db.QueryRowContext(ctx, `SELECT n, call_id FROM events WHERE session_id = 's' AND seq = 159`).Scan(&n, &callID); err != nil || n != 3 || callID != "c3" {
		t.Fatalf("the run's nested events and result: row n %d call id %q (%v), want one row of 3 for c3", n, callID, err)
	}
	open, err := s.OpenCalls(ctx)
	if err != nil || len(open) != 1 || open[0].Call.CallID != "c2" || open[0].Seq != 154 {
		t.Fatalf("open calls %+v %v, want c2 at 154", open, err)
	}
	if used, err := s.UsedCallIDs(ctx, "s", []string{"c1", "c2", "c3", "c4"}); err != nil || len(used) != 3 {
		t.Fatalf("used call ids %v %v", used, err)
	}
}

// A database written before packing (schema 2) opens, reads its events as they were, and
// takes new ones, packed.
func TestSQLiteMigratesToPacking(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file://"+path)
	if err != nil {
		t.Fatal(err)
	}
	all, err := session.Migrations(migrationFS, "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE ` + session.MigrationsTable + ` (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range all[:2] {
		if _, err := db.Exec(m.SQL); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO `+session.MigrationsTable+` VALUES (?, ?, 0)`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	if _, err := db.Exec(`INSERT INTO sessions (id, scope, created_at) VALUES ('old', 'default', ?)`, now); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if _, err := db.Exec(`INSERT INTO events (session_id, seq, type, time, call_id, data) VALUES ('old', ?, 'user/context', ?, NULL, ?)`,
			i, now+int64(i), fmt.Sprintf(`{"source":"t","text":"%d"}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := sessiontest.Open(t, Open, path)
	var more []session.Event
	for i := 4; i <= 6; i++ {
		e, _ := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "t", Text: fmt.Sprint(i)})
		more = append(more, e)
	}
	if _, err := s.Append(ctx, "old", more...); err != nil {
		t.Fatal(err)
	}
	evs, err := s.Events(ctx, "old", 2, 0)
	if err != nil || len(evs) != 4 {
		t.Fatalf("events after 2: %v %v", evs, err)
	}
	for i, e := range evs {
		var c session.UserContext
		if err := json.Unmarshal(e.Data, &c); err != nil || e.Seq != int64(i+3) || c.Text != fmt.Sprint(i+3) {
			t.Fatalf("event %d: %d %s", i, e.Seq, e.Data)
		}
	}
	if sess, err := s.GetSession(ctx, "old"); err != nil || sess.LastSeq != 6 {
		t.Fatalf("header %+v %v", sess, err)
	}
}
