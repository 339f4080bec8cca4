package session_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
)

func TestScratchCost(t *testing.T) {
	for _, sync := range []string{"FULL", "OFF"} {
		path := filepath.Join(t.TempDir(), "x.db")
		s := openSQLite(t, path)
		raw, _ := sql.Open("sqlite", "file://"+path+"?_pragma=busy_timeout(10000)&_pragma=synchronous("+sync+")")
		raw.SetMaxOpenConns(1)
		raw.Exec(`CREATE TABLE floor (session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, time INTEGER NOT NULL, call_id TEXT, data TEXT NOT NULL, UNIQUE (session_id, seq))`)
		raw.Exec(`CREATE TABLE floor2 (session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, time INTEGER NOT NULL, call_id TEXT, data TEXT NOT NULL, UNIQUE (session_id, seq))`)
		raw.Exec(`CREATE INDEX f2c ON floor2 (session_id, call_id) WHERE call_id IS NOT NULL`)
		if sync == "OFF" {
			s.Close()
			s = openSQLite(t, path) // cannot change sync of store; measure CPU with raw only below
		}
		ctx := context.Background()
		s.CreateSession(ctx, session.Session{ID: "x"})
		var a, b, c time.Duration
		const n = 400
		for i := 0; i < n; i++ {
			e := benchEvent(i)
			t0 := time.Now()
			raw.Exec(`INSERT INTO floor VALUES (?, ?, ?, ?, ?, ?)`, "x", i, e.Type, time.Now().UnixMicro(), fmt.Sprint("call", i), string(e.Data))
			t1 := time.Now()
			raw.Exec(`INSERT INTO floor2 VALUES (?, ?, ?, ?, ?, ?)`, "x", i, e.Type, time.Now().UnixMicro(), fmt.Sprint("call", i), string(e.Data))
			t2 := time.Now()
			if sync == "FULL" {
				if _, err := s.Append(ctx, "x", e); err != nil {
					t.Fatal(err)
				}
			}
			t3 := time.Now()
			a += t1.Sub(t0)
			b += t2.Sub(t1)
			c += t3.Sub(t2)
		}
		t.Logf("sync=%s floor %v floor+index %v append %v", sync, a/n, b/n, c/n)
	}
}
