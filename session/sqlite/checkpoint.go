package sqlite

import (
	"context"
	"database/sql"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/codemode/codemode/session"
)

// Checkpoints off the commit path.
//
// A checkpoint copies the WAL's pages back into the database file and
// flushes it, so that the WAL can start over. SQLite runs one in the
// connection whose commit takes the WAL past wal_autocheckpoint pages (1,000
// by default), before that commit returns: every hundred or so runs, a run's
// commit waited for the copy and two more flushes, which set the trivial
// run's 99th percentile (BENCHMARKS.md, "Figures behind the code's choices"). Here the writer's own threshold is a far bound,
// sqliteInlineCheckpointPages, that it reaches only when the checkpoints
// below fall behind, and a checkpointer goroutine, on a connection of its
// own, runs a PASSIVE checkpoint (which neither waits for nor blocks the
// writer, and flushes as the connection's synchronous setting says) once the
// commits since its last one have written about sqliteCheckpointPages pages.
// A checkpoint that finds a commit in progress copies what was committed
// before it. The WAL starts over (is written again from its start) at the
// first commit after a checkpoint that copied all of it, so under steady
// load, where every checkpoint overlaps a commit, it grows to the far bound
// and starts over there.
const (
	// sqliteCheckpointPages is how many WAL pages the commits write before
	// the checkpointer runs: SQLite's default threshold.
	sqliteCheckpointPages = 1000
	// sqliteInlineCheckpointPages is the writer's own threshold: with
	// 4 KiB pages it bounds the WAL at about 32 MiB when checkpoints
	// cannot keep up.
	sqliteInlineCheckpointPages = 8000
	// sqliteCommitPages estimates the pages a commit writes besides its
	// events' data: the leaves of the events table, its two indexes and,
	// for a new session, the sessions table and its three (a trivial run
	// writes about 9).
	sqliteCommitPages = 8
	sqlitePageSize    = 4096 // SQLite's default, which this store keeps
)

// checkpointer runs the store's checkpoints; see above.
type checkpointer struct {
	wake  chan struct{} // a token when pages passed sqliteCheckpointPages
	stop  context.CancelFunc
	done  chan struct{} // closed when the goroutine has returned
	pages atomic.Int64  // estimated WAL pages written since the last wake
	hold  chan struct{} // tests: while non-nil and open, checkpoints wait
	runs  atomic.Int64  // checkpoints run
	left  atomic.Int64  // pages the last checkpoint could not copy
	busy  atomic.Int64  // nanoseconds spent in checkpoints
	fails atomic.Int64  // checkpoints that failed (retried at the next wake)
}

// startCheckpointer raises the writer's own checkpoint threshold to the far
// bound and starts the checkpointer on conn, which it closes when it stops.
func (s *Store) startCheckpointer(ctx context.Context, writer sqliteConn, conn *sql.Conn) error {
	if _, err := writer.ExecContext(ctx, "PRAGMA wal_autocheckpoint = "+strconv.Itoa(sqliteInlineCheckpointPages)); err != nil {
		conn.Close()
		return err
	}
	runCtx, stop := context.WithCancel(context.Background())
	c := &checkpointer{wake: make(chan struct{}, 1), stop: stop, done: make(chan struct{})}
	s.checkpoints = c
	go c.run(runCtx, conn)
	return nil
}

// wrote counts a committed batch's pages and wakes the checkpointer when
// they pass sqliteCheckpointPages. It runs on the committer's goroutine.
func (c *checkpointer) wrote(batch []*session.Pending) {
	var data int64
	for _, p := range batch {
		for i := range p.Events {
			data += int64(len(p.Events[i].Data))
		}
	}
	n := sqliteCommitPages + (data+sqlitePageSize-1)/sqlitePageSize
	if c.pages.Add(n) < sqliteCheckpointPages {
		return
	}
	c.pages.Store(0)
	select {
	case c.wake <- struct{}{}:
	default: // one is pending already
	}
}

func (c *checkpointer) run(ctx context.Context, conn *sql.Conn) {
	defer close(c.done)
	defer conn.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
		if c.hold != nil {
			select {
			case <-c.hold:
			case <-ctx.Done():
				return
			}
		}
		start := time.Now()
		var busy, log, copied int64
		err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied)
		c.busy.Add(int64(time.Since(start)))
		if err != nil || busy != 0 {
			// SQLITE_BUSY: another connection was checkpointing (the
			// writer at its far bound, another process). The next wake
			// tries again.
			c.fails.Add(1)
			continue
		}
		c.runs.Add(1)
		c.left.Store(max(log-copied, 0))
	}
}

// close stops the checkpointer and waits for it.
func (c *checkpointer) close() {
	c.stop()
	<-c.done
}

// CheckpointStats count a SQLite store's checkpoints since it opened.
type CheckpointStats struct {
	Checkpoints int64         // checkpoints run off the commit path
	Failed      int64         // checkpoints that failed or found another running
	Busy        time.Duration // time spent in them
	Left        int64         // WAL pages the last one found committed but could not copy yet
}

// CheckpointStats reports the store's checkpoints; zero for ":memory:".
func (s *Store) CheckpointStats() CheckpointStats {
	c := s.checkpoints
	if c == nil {
		return CheckpointStats{}
	}
	return CheckpointStats{Checkpoints: c.runs.Load(), Failed: c.fails.Load(), Busy: time.Duration(c.busy.Load()), Left: c.left.Load()}
}
