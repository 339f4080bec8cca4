package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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

// Pending is a checked Write waiting for its commit, made by
// [PrepareWrite]. A backend's commit reads SessionID, Create, Events,
// Checkpoint and Lease, which it must not change, and sets Base, or Err
// when the write fails alone (ErrNotFound, ErrExists, a [LeaseLost], a
// [CheckpointPastLog]…) while the rest of its transaction commits.
type Pending struct {
	SessionID  string
	Create     *Session    // normalized by PrepareSession; LastSeq 0, UpdatedAt CreatedAt
	Events     []Prepared  // in order; numbered Base+1, Base+2, … when committed
	Checkpoint *Checkpoint // a private copy; Seq 0 with events: the last of them (see CheckpointSeq)
	Lease      *Lease      // fences the write; nil when it creates its session

	Base int64 // set by the commit: the session's last seq before the write's events
	Err  error // set by the commit: the write's own failure

	ticket *Ticket
	size   int // bytes held, for the queue's bound
}

// CheckpointSeq returns the seq the write's checkpoint covers, given Base.
func (p *Pending) CheckpointSeq() int64 {
	if p.Checkpoint.Seq == 0 && len(p.Events) > 0 {
		return p.Base + int64(len(p.Events))
	}
	return p.Checkpoint.Seq
}

// result returns the write's events as appended.
func (p *Pending) result() []Event {
	if len(p.Events) == 0 {
		return nil
	}
	out := make([]Event, len(p.Events))
	for i, e := range p.Events {
		out[i] = e.Event
		out[i].Seq = p.Base + int64(i) + 1
	}
	return out
}

// maxOwnerLen bounds lease owners.
const maxOwnerLen = 256

// prepareSubmitted is PrepareWrite at the time of a write submitted under
// ctx: ctx's error, if it is done, comes first.
func prepareSubmitted(ctx context.Context, w Write) (*Pending, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return PrepareWrite(w, time.Now())
}

// PrepareWrite checks a write and copies what it keeps, so that a backend
// commits only well-formed writes (see Store.Append for what an event must
// be) and its caller may reuse w at once. Zero times become now. It is what
// [Committer.Submit] runs; a store that commits without a Committer (as
// Memory does) runs it itself.
func PrepareWrite(w Write, now time.Time) (*Pending, error) {
	p := &Pending{SessionID: w.SessionID}
	if w.Create != nil {
		s := *w.Create
		if s.ID == "" {
			s.ID = w.SessionID
		} else if s.ID != w.SessionID {
			return nil, fmt.Errorf("session: write to %q creates session %q", w.SessionID, s.ID)
		}
		s, err := PrepareSession(s, now)
		if err != nil {
			return nil, err
		}
		s.LastSeq, s.UpdatedAt = 0, s.CreatedAt
		p.Create = &s
		if w.Lease != nil {
			return nil, fmt.Errorf("session: write to %q creates its session and carries a lease: a new session has none", w.SessionID)
		}
	}
	events, err := prepare(w.Events, now)
	if err != nil {
		return nil, err
	}
	p.Events = events
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
		if p.Create != nil && c.Seq > 0 {
			return nil, fmt.Errorf("session: checkpoint of new session %q covers seq %d, past its events", w.SessionID, c.Seq)
		}
		p.Checkpoint = &Checkpoint{Seq: c.Seq, State: bytes.Clone(bytes.TrimSpace(c.State))}
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
		p.Lease = &lease
	}
	return p, nil
}

// checkOwner validates a lease owner: like a session id, non-empty UTF-8
// text of at most 256 bytes without control characters.
func checkOwner(owner string) error {
	if err := CheckID(owner); err != nil {
		return fmt.Errorf("session: lease owner: %w", errors.Unwrap(err))
	}
	return nil
}

// CheckLease checks AcquireLease's arguments: a valid owner (like a session
// id) and a ttl of at least a microsecond. Backends call it first.
func CheckLease(owner string, ttl time.Duration) error {
	if err := checkOwner(owner); err != nil {
		return err
	}
	if ttl < time.Microsecond {
		return fmt.Errorf("session: lease ttl %v is not positive", ttl)
	}
	return nil
}

// Submitter is the Submit of a Store.
type Submitter interface {
	Submit(ctx context.Context, w Write) *Ticket
}

// AppendBySubmit implements Store.Append for a store s over its Submit: the
// events are one Write, waited for. An empty append only checks that the
// session exists, with last, which returns the session's last seq or
// ErrNotFound (or ErrClosed).
func AppendBySubmit(ctx context.Context, s Submitter, last func(context.Context, string) (int64, error), sessionID string, events []Event) ([]Event, error) {
	if len(events) == 0 {
		_, err := last(ctx, sessionID)
		return nil, err
	}
	return s.Submit(ctx, Write{SessionID: sessionID, Events: events}).Wait(ctx)
}

// CreateBySubmit implements Store.CreateSession for a store s over its
// Submit: a Write that creates the session, waited for.
func CreateBySubmit(ctx context.Context, s Submitter, sess Session) error {
	_, err := s.Submit(ctx, Write{SessionID: sess.ID, Create: &sess}).Wait(ctx)
	return err
}

// Leased is the error of AcquireLease when owner holds the session's lease
// until expires: it matches ErrLeased and names the holder.
func Leased(sessionID, owner string, expires time.Time) error {
	return fmt.Errorf("%w: session %q is leased by %q until %s", ErrLeased, sessionID, owner, expires.UTC().Format(time.RFC3339Nano))
}

// LeaseLost is the error of a write fenced by l, or of releasing l, once l
// is no longer the session's lease: it matches ErrLeaseLost.
func LeaseLost(sessionID string, l Lease) error {
	return fmt.Errorf("%w: session %q is no longer leased by %q with token %d", ErrLeaseLost, sessionID, l.Owner, l.Token)
}

// CheckpointPast reports whether the write's checkpoint names a seq past the
// session's last seq before the write's events, given Base: the write must
// then fail with CheckpointPastLog.
func (p *Pending) CheckpointPast() bool { return p.Checkpoint != nil && p.Checkpoint.Seq > p.Base }

// CheckpointPastLog is the error of a write whose checkpoint covers seq,
// events past the session's last seq: the log lacks them.
func CheckpointPastLog(sessionID string, seq, last int64) error {
	return fmt.Errorf("session: checkpoint of %q covers seq %d, past its last seq %d", sessionID, seq, last)
}
