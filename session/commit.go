package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of the group commit.
const (
	// maxBatchWrites and maxBatchBytes bound one transaction (a bigger
	// write still commits, alone).
	maxBatchWrites = 1024
	maxBatchBytes  = 8 << 20
	// maxQueuedBytes bounds what waits for a commit: Submit waits for room
	// beyond it.
	maxQueuedBytes = 64 << 20
)

// CommitStats count a store's group commits since it opened.
type CommitStats struct {
	Commits int64         // transactions committed (each one flush with DurabilityFull)
	Failed  int64         // transactions that failed (a refused batch's writes are then committed one by one)
	Busy    time.Duration // time spent in transactions, committed and failed, flushes included
	Writes  int64         // writes taken into transactions, failed ones included
	Events  int64         // events appended
	Queued  int           // writes waiting for a commit now
}

// Committer is the group commit a store is built on: one goroutine takes
// whatever has been submitted since its last commit, hands it to the
// backend's commit as one batch (one transaction, one flush) and resolves
// its tickets, while the next writes queue up.
//
// What it guarantees: writes are checked (PrepareWrite) before they queue;
// batches keep the order of submission, so one session's writes take
// effect, and its tickets resolve, in the order submitted; a batch holds at
// most 1024 writes and 8 MiB (a bigger write commits alone); Submit waits
// for room while 64 MiB wait; a batch the database refuses (commit fails
// without ErrUnavailable) is committed again write by write, so only the
// refused writes fail, with ErrRefused; every ticket of a batch that fails
// with ErrUnavailable fails with that error, and WriteErr reports it. Close
// commits what was submitted before it.
//
// What the backend's commit must do: run one transaction for the batch, in
// order, judging each write against its session as the writes before it in
// the batch leave it (Create fails with ErrExists on a taken id, a write to
// a missing session with ErrNotFound, a fenced write with LeaseLost unless
// its lease is the session's, a CheckpointPast write with
// CheckpointPastLog), setting each write's Base (its events are numbered
// Base+1, …) or Err, and saving each session's newest checkpoint (the
// greatest CheckpointSeq; a saved one covering more stays). It returns nil
// when the transaction committed, or an error when nothing of it did: one
// matching ErrUnavailable (see Unavailable) when the store itself failed, so
// that retrying the writes one by one would not help (or, the outcome
// unknown, could commit them twice); any other error is the database
// refusing the batch's data. It runs on the committer's goroutine only,
// and must reset Base and Err first: a refused batch is committed again.
type Committer struct {
	commit    func(batch []*Pending) error
	committed func(batch []*Pending)

	// maxBatch and maxQueued are maxBatchBytes and maxQueuedBytes but in
	// tests; guarded by mu.
	maxBatch, maxQueued int

	mu      sync.Mutex
	queue   []*Pending    // guarded by mu
	bytes   int           // queued; guarded by mu
	closed  bool          // guarded by mu
	drained chan struct{} // closed when the writer takes a batch; guarded by mu
	wake    chan struct{} // a pending wake-up for the writer
	stopped chan struct{} // closed when the writer has stopped

	commits, failed, busy, writes, events atomic.Int64 // busy in nanoseconds

	// failure is the store's own failure (ErrUnavailable) of the latest
	// resolved batch and when it happened; nil once a batch committed.
	failMu    sync.Mutex
	failure   error     // guarded by failMu
	failureAt time.Time // guarded by failMu
}

// writeFailureWindow is how long a store failure of the latest write
// makes the store report its writes failing (WriteHealth) when nothing
// has been written since: a store no one writes to while it reports
// failing (a load balancer sends it nothing) must come back by itself.
const writeFailureWindow = 30 * time.Second

// NewCommitter starts a group commit over a backend's commit (see
// Committer). committed, called on the committer's goroutine after the
// tickets of a batch that committed resolved, is where the backend wakes its
// waiters (Waiters.Committed) or counts what it wrote; it may be nil.
func NewCommitter(commit func(batch []*Pending) error, committed func(batch []*Pending)) *Committer {
	if committed == nil {
		committed = func([]*Pending) {}
	}
	c := &Committer{commit: commit, committed: committed, maxBatch: maxBatchBytes, maxQueued: maxQueuedBytes, drained: make(chan struct{}),
		wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go c.run()
	return c
}

// Submit checks and queues a write, and returns its ticket (see
// Store.Submit): a malformed write, or one submitted after Close, fails its
// ticket at once; ctx bounds only the wait for room in the queue.
func (c *Committer) Submit(ctx context.Context, w Write) *Ticket {
	p, err := prepareSubmitted(ctx, w)
	if err != nil {
		return failed(err)
	}
	p.ticket = newTicket()
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return failed(ErrClosed)
		}
		if len(c.queue) == 0 || c.bytes+p.size <= c.maxQueued {
			c.queue = append(c.queue, p)
			c.bytes += p.size
			c.mu.Unlock()
			select {
			case c.wake <- struct{}{}:
			default:
			}
			return p.ticket
		}
		room := c.drained
		c.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return failed(ctx.Err())
		}
	}
}

// run is the writer.
func (c *Committer) run() {
	defer close(c.stopped)
	for {
		c.mu.Lock()
		for len(c.queue) == 0 && !c.closed {
			c.mu.Unlock()
			<-c.wake
			c.mu.Lock()
		}
		if len(c.queue) == 0 {
			c.mu.Unlock()
			return
		}
		n, size := 0, 0
		for n < len(c.queue) && n < maxBatchWrites && (n == 0 || size+c.queue[n].size <= c.maxBatch) {
			size += c.queue[n].size
			n++
		}
		batch := c.queue[:n:n]
		c.queue = append([]*Pending(nil), c.queue[n:]...)
		c.bytes -= size
		close(c.drained)
		c.drained = make(chan struct{})
		c.mu.Unlock()

		c.writes.Add(int64(len(batch)))
		err := c.commitOnce(batch)
		if err != nil && len(batch) > 1 && !errors.Is(err, ErrUnavailable) {
			// The database refused the batch for one write's data (or
			// a few): commit them one by one, in order, so that only
			// those fail and their neighbours, other sessions' writes
			// among them, do not.
			var down error // the store failed meanwhile: the rest fail with it
			for _, p := range batch {
				err := down
				if err == nil {
					err = c.commitOnce([]*Pending{p})
				}
				if errors.Is(err, ErrUnavailable) {
					down = err
				}
				c.resolve([]*Pending{p}, err)
			}
			continue
		}
		c.resolve(batch, err)
	}
}

// commitOnce runs one transaction, counting it.
func (c *Committer) commitOnce(batch []*Pending) error {
	start := time.Now()
	err := c.commit(batch)
	c.busy.Add(int64(time.Since(start)))
	if err == nil {
		c.commits.Add(1)
	} else {
		c.failed.Add(1)
	}
	return err
}

// resolve resolves the tickets of a batch that committed (err nil) or
// failed whole.
func (c *Committer) resolve(batch []*Pending, err error) {
	// The health first: a writer told of its write's outcome sees it.
	switch {
	case err == nil:
		c.setFailure(nil)
	case errors.Is(err, ErrUnavailable):
		c.setFailure(err)
	}
	for _, p := range batch {
		switch {
		case err != nil && !errors.Is(err, ErrUnavailable) && !errors.Is(err, ErrRefused):
			p.ticket.resolve(nil, markedError{fmt.Errorf("session: the database refused the write to %q: %w", p.SessionID, err), ErrRefused})
		case err != nil:
			p.ticket.resolve(nil, err)
		case p.Err != nil:
			p.ticket.resolve(nil, p.Err)
		default:
			c.events.Add(int64(len(p.Events)))
			p.ticket.resolve(p.result(), nil)
		}
	}
	if err == nil {
		c.committed(batch)
	}
}

func (c *Committer) setFailure(err error) {
	c.failMu.Lock()
	c.failure, c.failureAt = err, time.Now()
	c.failMu.Unlock()
}

// WriteErr implements WriteHealth for the store: the ErrUnavailable
// failure of the latest batch, for 30 seconds unless a batch commits.
func (c *Committer) WriteErr() error {
	c.failMu.Lock()
	defer c.failMu.Unlock()
	if c.failure != nil && time.Since(c.failureAt) < writeFailureWindow {
		return c.failure
	}
	return nil
}

// Close commits what is queued, stops the writer and makes later submits
// fail with ErrClosed. A backend closes its Committer before the database
// the commits use.
func (c *Committer) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.stopped
}

// Stats returns the counts of the commits so far.
func (c *Committer) Stats() CommitStats {
	c.mu.Lock()
	queued := len(c.queue)
	c.mu.Unlock()
	return CommitStats{Commits: c.commits.Load(), Failed: c.failed.Load(), Busy: time.Duration(c.busy.Load()),
		Writes: c.writes.Load(), Events: c.events.Load(), Queued: queued}
}
