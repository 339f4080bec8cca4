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

// BenchmarkConcurrentAppend measures one-event writes from 1, 16 and 64
// concurrent appenders, each to a session of its own (many runs at once),
// beside the floor on the same database: a raw single-row INSERT per event
// in its own transaction, from as many goroutines. ns/op is per event.
//
//	floor   the raw INSERT
//	append  Append: each appender waits for its event to be durable
//	submit  Submit: each appender keeps up to 16 writes in flight and
//	        waits for the oldest (output gating: queue, show later)
//
// It reports events/s and the store's commits per event (each commit is
// one flush with durability full; on SQLite, `strace -f -c -e
// trace=fsync,fdatasync` of the benchmark confirms it).
func BenchmarkConcurrentAppend(b *testing.B) {
	for _, db := range benchDBs(b) {
		for _, n := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/floor/appenders=%d", db.name, n), func(b *testing.B) {
				base := benchSeq.Add(int64(b.N)) - int64(b.N)
				e := benchEvent(1)
				var mu sync.Mutex
				runConcurrent(b, n, func(ctx context.Context, w, i int) error {
					if db.serialFloor {
						mu.Lock()
						defer mu.Unlock()
					}
					return db.insert(ctx, base+int64(i), e)
				}, nil, nil)
			})
			b.Run(fmt.Sprintf("%s/append/appenders=%d", db.name, n), func(b *testing.B) {
				ids := benchSessions(b, db.store, n)
				e := benchEvent(1)
				runConcurrent(b, n, func(ctx context.Context, w, i int) error {
					_, err := db.store.Append(ctx, ids[w], e)
					return err
				}, nil, db.store.Stats)
			})
			b.Run(fmt.Sprintf("%s/submit/appenders=%d", db.name, n), func(b *testing.B) {
				ids := benchSessions(b, db.store, n)
				e := benchEvent(1)
				const window = 16
				inflight := make([][]*session.Ticket, n)
				drain := func(ctx context.Context, w int) error {
					for _, tk := range inflight[w] {
						if _, err := tk.Wait(ctx); err != nil {
							return err
						}
					}
					inflight[w] = inflight[w][:0]
					return nil
				}
				runConcurrent(b, n, func(ctx context.Context, w, i int) error {
					inflight[w] = append(inflight[w], db.store.Submit(ctx, session.Write{SessionID: ids[w], Events: []session.Event{e}}))
					if len(inflight[w]) < window {
						return nil
					}
					return drain(ctx, w)
				}, drain, db.store.Stats)
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
// goroutine's number and the op's; drain, when set, ends each goroutine's
// share), and reports events per second and, given the store's stats,
// commits per event.
func runConcurrent(b *testing.B, n int, op func(ctx context.Context, w, i int) error, drain func(ctx context.Context, w int) error,
	stats func() session.CommitStats) {
	b.Helper()
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	var before session.CommitStats
	if stats != nil {
		before = stats()
	}
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
					if drain != nil {
						if err := drain(ctx, w); err != nil {
							errs <- err
						}
					}
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
	b.StopTimer()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	if stats != nil {
		after := stats()
		b.ReportMetric(float64(after.Commits-before.Commits)/float64(b.N), "commits/event")
	}
}
