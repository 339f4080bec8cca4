package session_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
)

// BenchmarkConcurrentAppend measures appends of one event each from 1, 16
// and 64 concurrent appenders, each to a session of its own (many runs at
// once), and the floor beside it on the same database: a raw single-row
// INSERT per event in its own transaction, from as many goroutines. ns/op is
// per event.
func BenchmarkConcurrentAppend(b *testing.B) {
	for _, db := range benchDBs(b) {
		for _, n := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/floor/appenders=%d", db.name, n), func(b *testing.B) {
				base := benchSeq.Add(int64(b.N)) - int64(b.N)
				e := benchEvent(1)
				var mu sync.Mutex // a SQLite file takes one writer at a time: serialize in Go, as the store does
				runConcurrent(b, n, func(ctx context.Context, w, i int) error {
					if db.serialFloor {
						mu.Lock()
						defer mu.Unlock()
					}
					return db.insert(ctx, base+int64(i), e)
				})
			})
			b.Run(fmt.Sprintf("%s/append/appenders=%d", db.name, n), func(b *testing.B) {
				ids := benchSessions(b, db.store, n)
				e := benchEvent(1)
				runConcurrent(b, n, func(ctx context.Context, w, i int) error {
					_, err := db.store.Append(ctx, ids[w], e)
					return err
				})
			})
		}
	}
}

// benchSessions creates n sessions for a benchmark round.
func benchSessions(b *testing.B, s session.Store, n int) []string {
	b.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-%d", benchSeq.Add(1))
		if err := s.CreateSession(context.Background(), session.Session{ID: ids[i]}); err != nil {
			b.Fatal(err)
		}
	}
	return ids
}

// runConcurrent runs op b.N times in all, from n goroutines (op gets the
// goroutine's number and the op's), and reports events per second.
func runConcurrent(b *testing.B, n int, op func(ctx context.Context, w, i int) error) {
	b.Helper()
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				if err := op(ctx, w, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}
