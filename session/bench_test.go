package session_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/codemode/codemode/internal/pgtest"
	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/postgres"
	"github.com/codemode/codemode/session/sqlite"
)

// The append benchmarks report the cost per event of the log (Append,
// Submit) and, on the same database in the same run, of the floor: raw
// single-row INSERTs of the same columns, each its own transaction with the
// same durability. One appender: Append ≤ 2× the floor per event; many:
// the group commit beats the floor by sharing flushes.
//
//	go test -run '^$' -bench Append -count 5 ./session

// benchBatch is the batch size of BenchmarkAppend/*/batch16.
const benchBatch = 16

// benchEvent is a typical tool/call.
func benchEvent(i int) session.Event {
	return ctxEventOf(session.TypeToolCall, session.ToolCall{Turn: 1, Step: i, CallID: fmt.Sprintf("call_%08d", i),
		Name: "files_write", Arguments: `{"path":"notes/today.md","content":"A line of text that a model wrote, about this long."}`})
}

func ctxEventOf(typ string, payload any) session.Event {
	e, err := session.NewEvent(typ, payload)
	if err != nil {
		panic(err)
	}
	return e
}

// benchDB is one database: a store on it and a raw single-row insert on it,
// with the same durability.
type benchDB struct {
	name  string
	store interface {
		session.Store
		Stats() session.CommitStats
	}
	insert func(ctx context.Context, seq int64, e session.Event) error
	// serialFloor: concurrent floor inserts take turns (one SQLite file
	// has one writer at a time; waiting in Go beats SQLite's busy sleeps).
	serialFloor bool
}

// benchDBs opens SQLite with each durability and, when it is reachable,
// PostgreSQL with each: "sqlite" and "postgres" are the defaults (full),
// "-process" the other setting.
func benchDBs(b *testing.B) []benchDB {
	ctx := context.Background()
	var out []benchDB
	for _, d := range []session.Durability{session.DurabilityFull, session.DurabilityProcess} {
		path := filepath.Join(b.TempDir(), "bench.db")
		lite, err := sqlite.Open(ctx, path, session.Options{Durability: d})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { lite.Close() })
		sync, name := "FULL", "sqlite"
		if d == session.DurabilityProcess {
			sync, name = "NORMAL", "sqlite-process"
		}
		raw, err := sql.Open("sqlite", "file://"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)&_pragma=synchronous("+sync+")")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { raw.Close() })
		if _, err := raw.Exec(`CREATE TABLE floor (session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL,
			time INTEGER NOT NULL, call_id TEXT, data TEXT NOT NULL, UNIQUE (session_id, seq))`); err != nil {
			b.Fatal(err)
		}
		insert, err := raw.Prepare(`INSERT INTO floor (session_id, seq, type, time, call_id, data) VALUES (?, ?, ?, ?, ?, ?)`)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, benchDB{name: name, store: lite, serialFloor: true, insert: func(ctx context.Context, seq int64, e session.Event) error {
			_, err := insert.ExecContext(ctx, "bench", seq, e.Type, time.Now().UnixMicro(), "call", string(e.Data))
			return err
		}})
	}

	if _, err := pgtest.URL(); err != nil {
		b.Logf("PostgreSQL benchmarks skipped: %v", err)
		return out
	}
	for _, d := range []session.Durability{session.DurabilityFull, session.DurabilityProcess} {
		u := postgresSchema(b)
		pg, err := postgres.Open(ctx, u, session.Options{Durability: d})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { pg.Close() })
		name, floorURL := "postgres", u
		if d == session.DurabilityProcess {
			name, floorURL = "postgres-process", u+"&synchronous_commit=off"
		}
		pool, err := pgxpool.New(ctx, floorURL)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(pool.Close)
		if _, err := pool.Exec(ctx, `CREATE TABLE floor (session_id text NOT NULL, seq bigint NOT NULL, type text NOT NULL,
			time timestamptz NOT NULL, call_id text, data text NOT NULL, PRIMARY KEY (session_id, seq))`); err != nil {
			b.Fatal(err)
		}
		out = append(out, benchDB{name: name, store: pg, insert: func(ctx context.Context, seq int64, e session.Event) error {
			_, err := pool.Exec(ctx, `INSERT INTO floor (session_id, seq, type, time, call_id, data) VALUES ($1, $2, $3, $4, $5, $6)`,
				"bench", seq, e.Type, time.Now(), "call", string(e.Data))
			return err
		}})
	}
	return out
}

// BenchmarkAppend measures, per database, the floor (a raw single-row
// INSERT per event), Append of one event at a time, and Append of batches of
// benchBatch events; ns/op is per event in each. The three run back to back
// on one database so that they see the same disk.
func BenchmarkAppend(b *testing.B) {
	for _, db := range benchDBs(b) {
		b.Run(db.name+"/floor", func(b *testing.B) {
			ctx := context.Background()
			e := benchEvent(1)
			base := benchSeq.Add(int64(b.N)) - int64(b.N) // unique seqs across rounds
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := db.insert(ctx, base+int64(i), e); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, batch := range []int{1, benchBatch} {
			name := "single"
			if batch > 1 {
				name = fmt.Sprintf("batch%d", batch)
			}
			b.Run(db.name+"/"+name, func(b *testing.B) {
				ctx := context.Background()
				id := fmt.Sprintf("bench-%d", benchSeq.Add(1))
				if err := db.store.CreateSession(ctx, session.Session{ID: id}); err != nil {
					b.Fatal(err)
				}
				events := make([]session.Event, b.N)
				for i := range events {
					events[i] = benchEvent(i)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i += batch {
					if _, err := db.store.Append(ctx, id, events[i:min(i+batch, b.N)]...); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchSeq makes session ids and floor seqs unique across benchmark rounds.
var benchSeq atomic.Int64

// BenchmarkAppendVsFloor alternates one single-event Append with one floor
// INSERT on the same database and reports each one's mean and their ratio,
// so that a disk busy with other work slows both alike.
func BenchmarkAppendVsFloor(b *testing.B) {
	for _, db := range benchDBs(b) {
		b.Run(db.name, func(b *testing.B) {
			ctx := context.Background()
			id := fmt.Sprintf("bench-%d", benchSeq.Add(1))
			if err := db.store.CreateSession(ctx, session.Session{ID: id}); err != nil {
				b.Fatal(err)
			}
			base := benchSeq.Add(int64(b.N)) - int64(b.N)
			e := benchEvent(1)
			var appendTime, floorTime time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := db.store.Append(ctx, id, e); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if err := db.insert(ctx, base+int64(i), e); err != nil {
					b.Fatal(err)
				}
				appendTime += mid.Sub(start)
				floorTime += time.Since(mid)
			}
			b.ReportMetric(float64(appendTime.Nanoseconds())/float64(b.N), "append-ns/event")
			b.ReportMetric(float64(floorTime.Nanoseconds())/float64(b.N), "floor-ns/event")
			b.ReportMetric(float64(appendTime)/float64(floorTime), "append/floor")
		})
	}
}
