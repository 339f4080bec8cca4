package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/postgres"
	"github.com/codemode/codemode/session/sqlite"
)

// logDB is one database: the session store on it, and the floor, a raw
// single-row INSERT of the same columns in its own transaction with the
// same durability.
type logDB struct {
	name   string
	store  session.Store
	insert func(ctx context.Context, seq int64, e session.Event) error
	close  func()
}

// logEvent is a typical tool/call event.
func logEvent() (session.Event, error) {
	return session.NewEvent(session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: "call_00000001",
		Name: "files_write", Arguments: `{"path":"notes/today.md","content":"A line of text that a model wrote, about this long."}`})
}

func openSQLiteLog(ctx context.Context, dir string) (*logDB, error) {
	path := filepath.Join(dir, "log.db")
	store, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	// The store has put the file in WAL mode; the floor's connection
	// commits with the store's synchronous=FULL.
	raw, err := sql.Open("sqlite", "file://"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)")
	if err != nil {
		store.Close()
		return nil, err
	}
	closeAll := func() { raw.Close(); store.Close() }
	if _, err := raw.ExecContext(ctx, `CREATE TABLE floor (session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL,
		time INTEGER NOT NULL, call_id TEXT, data TEXT NOT NULL, UNIQUE (session_id, seq))`); err != nil {
		closeAll()
		return nil, err
	}
	stmt, err := raw.PrepareContext(ctx, `INSERT INTO floor (session_id, seq, type, time, call_id, data) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		closeAll()
		return nil, err
	}
	return &logDB{name: "SQLite", store: store, close: closeAll, insert: func(ctx context.Context, seq int64, e session.Event) error {
		_, err := stmt.ExecContext(ctx, "bench", seq, e.Type, time.Now().UnixMicro(), "call", string(e.Data))
		return err
	}}, nil
}

// openPostgresLog uses a schema of its own in the database at base, dropped
// by close.
func openPostgresLog(ctx context.Context, base string) (*logDB, error) {
	schema := "codemode_bench_" + session.NewID()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	drop := func() {
		conn.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(context.WithoutCancel(ctx))
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	store, err := postgres.Open(ctx, u.String())
	if err != nil {
		drop()
		return nil, err
	}
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		store.Close()
		drop()
		return nil, err
	}
	closeAll := func() { pool.Close(); store.Close(); drop() }
	if _, err := pool.Exec(ctx, `CREATE TABLE floor (session_id text NOT NULL, seq bigint NOT NULL, type text NOT NULL,
		time timestamptz NOT NULL, call_id text, data text NOT NULL, PRIMARY KEY (session_id, seq))`); err != nil {
		closeAll()
		return nil, err
	}
	return &logDB{name: "PostgreSQL", store: store, close: closeAll, insert: func(ctx context.Context, seq int64, e session.Event) error {
		_, err := pool.Exec(ctx, `INSERT INTO floor (session_id, seq, type, time, call_id, data) VALUES ($1, $2, $3, $4, $5, $6)`,
			"bench", seq, e.Type, time.Now(), "call", string(e.Data))
		return err
	}}, nil
}

// measureLog alternates one single-event Append with one floor INSERT, so
// that a disk busy with other work slows both alike, for rounds of d each,
// and returns the medians over rounds of µs per event of each.
func measureLog(ctx context.Context, db *logDB, rounds int, d time.Duration) (appendUS, floorUS float64, err error) {
	ev, err := logEvent()
	if err != nil {
		return 0, 0, err
	}
	id := "bench_log"
	if err := db.store.CreateSession(ctx, session.Session{ID: id}); err != nil {
		return 0, 0, err
	}
	var seq int64
	var appends, floors []float64
	for range rounds {
		var at, ft time.Duration
		n := 0
		for start := time.Now(); time.Since(start) < d; n++ {
			t0 := time.Now()
			if _, err := db.store.Append(ctx, id, ev); err != nil {
				return 0, 0, err
			}
			t1 := time.Now()
			seq++
			if err := db.insert(ctx, seq, ev); err != nil {
				return 0, 0, err
			}
			at += t1.Sub(t0)
			ft += time.Since(t1)
		}
		appends = append(appends, float64(at.Nanoseconds())/float64(n)/1e3)
		floors = append(floors, float64(ft.Nanoseconds())/float64(n)/1e3)
	}
	return median(appends), median(floors), nil
}

// logFigures measures the session log's single-event Append against the
// raw-insert floor on SQLite and, when a database is given, PostgreSQL.
func logFigures(e *env) ([]Row, error) {
	var rows []Row
	dbs := []func() (*logDB, error){func() (*logDB, error) { return openSQLiteLog(e.ctx, e.dir) }}
	if e.o.postgres != "" {
		dbs = append(dbs, func() (*logDB, error) { return openPostgresLog(e.ctx, e.o.postgres) })
	}
	for _, open := range dbs {
		db, err := open()
		if err != nil {
			return nil, err
		}
		appendUS, floorUS, err := measureLog(e.ctx, db, e.o.rounds, 2*e.o.roundTime)
		db.close()
		if err != nil {
			return nil, fmt.Errorf("%s log: %w", db.name, err)
		}
		r := Row{Figure: "session log append, " + db.name + " (per event)", Value: appendUS, Floor: floorUS, FloorName: "raw INSERT",
			Unit: "µs", Target: "≤ 2.00×"}.withRatio()
		rows = append(rows, r.judge(r.Ratio <= 2))
	}
	if e.o.postgres == "" {
		rows = append(rows, skipped("session log append, PostgreSQL (per event)", "no database: set -postgres or $CODEMODE_TEST_POSTGRES_URL"))
	}
	return rows, nil
}
