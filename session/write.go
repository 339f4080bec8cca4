package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Write is one atomic change to one session, made with [Store.Submit]: it
// commits whole or not at all.
type Write struct {
	SessionID string

	// Create, when set, creates the session first, in the same transaction
	// (as CreateSession would: its ID is SessionID when empty and must equal
	// it otherwise). The write fails with ErrExists when the id is taken.
	Create *Session

	// Events are appended in order, as Append appends them.
	Events []Event

	// Checkpoint, when set, is saved as the session's checkpoint after the
	// events (see Checkpoint for its Seq).
	Checkpoint *Checkpoint

	// Lease, when set, fences the write: it commits only while this lease
	// (Owner and Token) is the session's, and fails with ErrLeaseLost
	// otherwise. A write that creates its session carries no lease.
	Lease *Lease
}

// Checkpoint is a session's derived state as of an event: State, an opaque
// JSON value the store keeps verbatim, covers the events up to and
// including Seq. A session has at most one; saving one that covers fewer
// events than the saved one does nothing (the saved one is newer).
type Checkpoint struct {
	// Seq is the last event the state covers: at most the session's last
	// seq before the write's own events (a state its writer derived from the
	// log it has seen). In a Write with events, 0 stands for the last of
	// them instead (a writer that does not wait cannot know their numbers).
	Seq   int64
	State json.RawMessage
}

// Lease is a session's lease: Owner may step the session until Expires.
type Lease struct {
	SessionID string
	Owner     string
	// Token grows each time the lease changes hands; renewals keep it.
	Token int64
	// Expires is when the lease runs out, on this process's clock: the
	// ttl counted from before the store was asked, so never later than the
	// store's own record.
	Expires time.Time
}

// Ticket is the receipt of a submitted Write. It resolves once: when the
// write is durable, with its events as appended (Seq and Time assigned), or
// when it has failed.
type Ticket struct {
	done   chan struct{}
	events []Event
	err    error
}

// Done is closed when the ticket has resolved.
func (t *Ticket) Done() <-chan struct{} { return t.done }

// Wait returns the write's events once it is durable, or its error. When
// ctx ends first it returns ctx.Err(); the write goes on.
func (t *Ticket) Wait(ctx context.Context) ([]Event, error) {
	select {
	case <-t.done:
		return t.events, t.err
	default:
	}
	select {
	case <-t.done:
		return t.events, t.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func newTicket() *Ticket { return &Ticket{done: make(chan struct{})} }

func (t *Ticket) resolve(events []Event, err error) {
	t.events, t.err = events, err
	close(t.done)
}

// FailedTicket returns a ticket already resolved with err, for a Store that
// wraps another and refuses a write itself.
func FailedTicket(err error) *Ticket { return failed(err) }

// NewTicket returns an unresolved ticket and the function that resolves it,
// for a Store that wraps another and resolves its writes itself (a later
// call of resolve does nothing).
func NewTicket() (t *Ticket, resolve func(events []Event, err error)) {
	t = newTicket()
	var once sync.Once
	return t, func(events []Event, err error) { once.Do(func() { t.resolve(events, err) }) }
}

// failed returns a ticket resolved with err.
func failed(err error) *Ticket {
	t := newTicket()
	t.resolve(nil, err)
	return t
}

// queued is a checked Write waiting for its commit. The backend's commit
// sets base or err.
type queued struct {
	sessionID  string
	create     *Session // normalized by prepareSession
	events     []prepared
	checkpoint *Checkpoint // a private copy; Seq 0 with events: the last of them
	lease      *Lease
	ticket     *Ticket
	size       int // bytes held, for the queue's bound

	base int64 // the session's last seq before the write's events
	err  error // the write's own failure
}

// checkpointSeq returns the seq the write's checkpoint covers, given base.
func (p *queued) checkpointSeq() int64 {
	if p.checkpoint.Seq == 0 && len(p.events) > 0 {
		return p.base + int64(len(p.events))
	}
	return p.checkpoint.Seq
}

// result returns the write's events as appended.
func (p *queued) result() []Event {
	if len(p.events) == 0 {
		return nil
	}
	out := make([]Event, len(p.events))
	for i, e := range p.events {
		out[i] = e.Event
		out[i].Seq = p.base + int64(i) + 1
	}
	return out
}

// maxOwnerLen bounds lease owners.
const maxOwnerLen = 256

// prepareWrite checks a write and copies what it keeps.
func prepareWrite(w Write, now time.Time) (*queued, error) {
	p := &queued{sessionID: w.SessionID}
	if w.Create != nil {
		s := *w.Create
		if s.ID == "" {
			s.ID = w.SessionID
		} else if s.ID != w.SessionID {
			return nil, fmt.Errorf("session: write to %q creates session %q", w.SessionID, s.ID)
		}
		s, err := prepareSession(s, now)
		if err != nil {
			return nil, err
		}
		s.LastSeq, s.UpdatedAt = 0, s.CreatedAt
		p.create = &s
		if w.Lease != nil {
			return nil, fmt.Errorf("session: write to %q creates its session and carries a lease: a new session has none", w.SessionID)
		}
	}
	events, err := prepare(w.Events, now)
	if err != nil {
		return nil, err
	}
	p.events = events
	for _, e := range events {
		p.size += len(e.Data) + len(e.Type) + 64
	}
	if c := w.Checkpoint; c != nil {
		if c.Seq < 0 {
			return nil, fmt.Errorf("session: checkpoint of %q: negative seq %d", w.SessionID, c.Seq)
		}
		if !json.Valid(c.State) || !utf8.Valid(c.State) {
			return nil, fmt.Errorf("session: checkpoint of %q: state is not UTF-8 JSON", w.SessionID)
		}
		if p.create != nil && c.Seq > 0 {
			return nil, fmt.Errorf("session: checkpoint of new session %q covers seq %d, past its events", w.SessionID, c.Seq)
		}
		p.checkpoint = &Checkpoint{Seq: c.Seq, State: bytes.Clone(bytes.TrimSpace(c.State))}
		p.size += len(c.State)
	}
	if l := w.Lease; l != nil {
		if err := checkOwner(l.Owner); err != nil {
			return nil, err
		}
		if l.SessionID != "" && l.SessionID != w.SessionID {
			return nil, fmt.Errorf("session: write to %q carries the lease of %q", w.SessionID, l.SessionID)
		}
		lease := *l
		p.lease = &lease
	}
	return p, nil
}

// checkOwner validates a lease owner: like a session id, non-empty UTF-8
// text of at most 256 bytes without control characters.
func checkOwner(owner string) error {
	if err := checkID(owner); err != nil {
		return fmt.Errorf("session: lease owner: %w", errors.Unwrap(err))
	}
	return nil
}

// checkLease validates AcquireLease's arguments.
func checkLease(owner string, ttl time.Duration) error {
	if err := checkOwner(owner); err != nil {
		return err
	}
	if ttl < time.Microsecond {
		return fmt.Errorf("session: lease ttl %v is not positive", ttl)
	}
	return nil
}

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

// committer is the group commit shared by the SQL stores: one goroutine
// takes whatever has been queued, commits it in one transaction and
// resolves its tickets, while the next writes queue up.
type committer struct {
	// commit runs one transaction for batch, in order, setting each
	// write's base or err; an error fails the whole batch (nothing of it
	// committed). An error that is the store's own failure, after which
	// retrying the writes one by one would not help (or, the outcome
	// unknown, could commit them twice), matches ErrUnavailable; any other
	// is the database refusing the batch's data. It runs on the
	// committer's goroutine only.
	commit func(batch []*queued) error
	// committed is told, after the tickets resolved, of every batch that
	// committed.
	committed func(batch []*queued)

	// maxBatch and maxQueued are maxBatchBytes and maxQueuedBytes but in
	// tests; guarded by mu.
	maxBatch, maxQueued int

	mu      sync.Mutex
	queue   []*queued     // guarded by mu
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

func newCommitter(commit func([]*queued) error, committed func([]*queued)) *committer {
	c := &committer{commit: commit, committed: committed, maxBatch: maxBatchBytes, maxQueued: maxQueuedBytes, drained: make(chan struct{}),
		wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go c.run()
	return c
}

// submit checks and queues a write.
func (c *committer) submit(ctx context.Context, w Write) *Ticket {
	if err := ctx.Err(); err != nil {
		return failed(err)
	}
	p, err := prepareWrite(w, time.Now())
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
func (c *committer) run() {
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
		c.queue = append([]*queued(nil), c.queue[n:]...)
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
					err = c.commitOnce([]*queued{p})
				}
				if errors.Is(err, ErrUnavailable) {
					down = err
				}
				c.resolve([]*queued{p}, err)
			}
			continue
		}
		c.resolve(batch, err)
	}
}

// commitOnce runs one transaction, counting it.
func (c *committer) commitOnce(batch []*queued) error {
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
func (c *committer) resolve(batch []*queued, err error) {
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
			p.ticket.resolve(nil, markedError{fmt.Errorf("session: the database refused the write to %q: %w", p.sessionID, err), ErrRefused})
		case err != nil:
			p.ticket.resolve(nil, err)
		case p.err != nil:
			p.ticket.resolve(nil, p.err)
		default:
			c.events.Add(int64(len(p.events)))
			p.ticket.resolve(p.result(), nil)
		}
	}
	if err == nil {
		c.committed(batch)
	}
}

func (c *committer) setFailure(err error) {
	c.failMu.Lock()
	c.failure, c.failureAt = err, time.Now()
	c.failMu.Unlock()
}

// writeErr implements WriteHealth.
func (c *committer) writeErr() error {
	c.failMu.Lock()
	defer c.failMu.Unlock()
	if c.failure != nil && time.Since(c.failureAt) < writeFailureWindow {
		return c.failure
	}
	return nil
}

// close commits what is queued, stops the writer and makes later submits
// fail with ErrClosed.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.stopped
}

func (c *committer) stats() CommitStats {
	c.mu.Lock()
	queued := len(c.queue)
	c.mu.Unlock()
	return CommitStats{Commits: c.commits.Load(), Failed: c.failed.Load(), Busy: time.Duration(c.busy.Load()),
		Writes: c.writes.Load(), Events: c.events.Load(), Queued: queued}
}

// appendVia implements Store.Append over Submit; an empty append only checks
// that the session exists (with last, which returns its last seq).
func appendVia(ctx context.Context, s Store, last func(context.Context, string) (int64, error), sessionID string, events []Event) ([]Event, error) {
	if len(events) == 0 {
		_, err := last(ctx, sessionID)
		return nil, err
	}
	return s.Submit(ctx, Write{SessionID: sessionID, Events: events}).Wait(ctx)
}

// createVia implements Store.CreateSession over Submit.
func createVia(ctx context.Context, s Store, sess Session) error {
	_, err := s.Submit(ctx, Write{SessionID: sess.ID, Create: &sess}).Wait(ctx)
	return err
}

// leased is ErrLeased with who holds the lease.
func leased(sessionID, owner string, expires time.Time) error {
	return fmt.Errorf("%w: session %q is leased by %q until %s", ErrLeased, sessionID, owner, expires.UTC().Format(time.RFC3339Nano))
}

// leaseLost is ErrLeaseLost for a lease.
func leaseLost(sessionID string, l Lease) error {
	return fmt.Errorf("%w: session %q is no longer leased by %q with token %d", ErrLeaseLost, sessionID, l.Owner, l.Token)
}

// checkpointPast reports a checkpoint that names a seq past the session's
// last seq before the write's events, given base.
func (p *queued) checkpointPast() bool { return p.checkpoint != nil && p.checkpoint.Seq > p.base }

// checkpointPastLog fails a checkpoint that covers events the log lacks.
func checkpointPastLog(sessionID string, seq, last int64) error {
	return fmt.Errorf("session: checkpoint of %q covers seq %d, past its last seq %d", sessionID, seq, last)
}
