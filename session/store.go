package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Errors a Store returns; test with errors.Is.
var (
	// ErrNotFound: no session has that id.
	ErrNotFound = errors.New("session: not found")
	// ErrExists: a session is created with an id already taken.
	ErrExists = errors.New("session: already exists")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("session: store closed")
	// ErrLeased: another owner holds the session's lease and it has not
	// expired.
	ErrLeased = errors.New("session: leased by another owner")
	// ErrLeaseLost: the lease a write or a release names is no longer the
	// session's: it expired and another owner took it, or it was released.
	ErrLeaseLost = errors.New("session: lease lost")
	// ErrBadCursor: a ListSessions cursor that no page returned.
	ErrBadCursor = errors.New("session: bad page cursor")
	// ErrUnavailable: the store itself failed, not the write: the database
	// cannot be reached, the disk is full, or a commit's outcome is
	// unknown. The same write may succeed later; reads may still work.
	ErrUnavailable = errors.New("session: store unavailable")
	// ErrRefused: the database refused this write's data (a constraint, a
	// byte its encoding cannot hold) though the store's checks passed it.
	// Only the write fails: its group-commit neighbours are committed
	// without it.
	ErrRefused = errors.New("session: write refused by the database")
)

// WriteHealth is a store that knows whether its writes are failing for the
// store's own reasons, so that a service can say it is not ready while
// reads still work. The SQL stores implement it.
type WriteHealth interface {
	// WriteErr returns the failure (one matching ErrUnavailable) of the
	// store's latest write, or nil when that write committed, failed for
	// itself (ErrNotFound, ErrRefused…), or failed more than 30 seconds
	// ago with nothing written since.
	WriteErr() error
}

// Unavailable marks err as a failure of the store itself (it then matches
// ErrUnavailable, with err's message): what a backend's commit returns when
// the database failed rather than refused the data. nil stays nil.
func Unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	return markedError{err, ErrUnavailable}
}

// markedError is err that also matches mark with errors.Is; its message
// is err's.
type markedError struct{ err, mark error }

func (e markedError) Error() string   { return e.err.Error() }
func (e markedError) Unwrap() []error { return []error{e.err, e.mark} }

// Session is a log's header. Scope names the registry scope its calls run in.
type Session struct {
	ID        string
	Scope     string
	CreatedAt time.Time

	// Kept by the store and ignored when a session is created:
	// LastSeq is the seq of the session's last event, which is also its
	// number of events (0 for none); UpdatedAt is the later of CreatedAt and
	// the Time of its last event.
	LastSeq   int64
	UpdatedAt time.Time
}

// OpenCall is a tool/call with no later tool/result with the same call id in
// its session: after a crash, the call recovery must close.
type OpenCall struct {
	SessionID string
	Call      ToolCall
	Seq       int64
}

// LeaseSweeper is a store shared by processes that can list the leases
// whose holder is gone, so that another process closes the calls it left
// without waiting for a restart. The PostgreSQL and memory stores
// implement it.
type LeaseSweeper interface {
	// LapsedLeases returns the sessions whose lease lapsed (taken, neither
	// renewed before it expired nor released: its holder crashed or lost
	// the store), sorted, and the open calls of those sessions, ordered as
	// OpenCalls orders them. A lapsed lease stays listed until someone
	// takes it (AcquireLease) or its holder releases it.
	LapsedLeases(ctx context.Context) (sessions []string, open []OpenCall, err error)
}

// Store is the append-only session log. Implementations are safe for
// concurrent use.
//
// Writes go through a group commit: the writes of all sessions that arrive
// while the store is committing join its next transaction, which makes them
// durable with one flush. [Store.Submit] queues a write and returns at once
// with a [Ticket]; [Store.Append] and [Store.CreateSession] wait for theirs.
// Within one Store, the writes of a session take effect in the order they
// were submitted, and tickets resolve in that order: a caller that holds the
// ticket of its latest write knows, once it resolves, that every earlier one
// has too (output gating: nothing is shown before the log it depends on is
// durable).
type Store interface {
	// CreateSession creates an empty log. It fails with ErrExists when the id
	// is taken. A zero CreatedAt becomes now; it is kept in UTC with
	// microsecond precision. To create a session in the transaction of its
	// first events, Submit a Write with Create set instead.
	CreateSession(ctx context.Context, s Session) error

	// GetSession returns the session's header, LastSeq and UpdatedAt
	// included (without reading its events), or ErrNotFound.
	GetSession(ctx context.Context, id string) (Session, error)

	// Append appends events to the session atomically and in order, and
	// returns them with Seq (the session's next numbers, consecutive) and Time
	// (UTC, microsecond precision; now when zero) assigned; the Seq of the
	// given events is ignored. The events are durable when Append returns.
	// Concurrent appends to one session, from goroutines or processes sharing
	// the database, never produce duplicate or missing sequence numbers. It
	// fails with ErrNotFound for an unknown session, and without appending
	// anything when an event is malformed (empty or non-ASCII type; Data that
	// is not a UTF-8 JSON object or repeats seq, type or time; a tool/call or
	// tool/result without a string call_id; a Time outside the years 1-9999).
	// When ctx ends first, Append returns ctx.Err() and the events may still
	// be appended. Append is Submit and Wait.
	Append(ctx context.Context, sessionID string, events ...Event) ([]Event, error)

	// Submit queues a write for the next group commit and returns its
	// ticket at once; see [Write] for what one write may do. A malformed
	// write fails its ticket at once and queues nothing; a write that fails
	// at commit (ErrNotFound, ErrExists, ErrLeaseLost) fails alone, the
	// others in its transaction commit. ctx bounds only the queueing (which
	// waits when too much is queued already): once queued, a write is
	// committed whatever becomes of ctx.
	Submit(ctx context.Context, w Write) *Ticket

	// Events returns the session's events with Seq > after, in order, at most
	// limit of them (all when limit <= 0). It fails with ErrNotFound for an
	// unknown session.
	Events(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error)

	// Wait blocks until the session has an event with Seq > after and returns
	// nil, or returns ctx.Err() when ctx ends first, ErrNotFound for an
	// unknown (or deleted) session and ErrClosed when the store closes.
	// Appends made through other Store instances on the same database also
	// wake it.
	Wait(ctx context.Context, sessionID string, after int64) error

	// OpenCalls returns every tool/call, across all sessions, that has no
	// later tool/result with the same call id in its session, ordered by
	// session id and then Seq. Crash recovery closes them.
	OpenCalls(ctx context.Context) ([]OpenCall, error)

	// UsedCallIDs returns which of ids a tool/call of the session already
	// uses, in no particular order, through the call-id index (a reader
	// resuming from a checkpoint checks new calls without the whole log). It
	// fails with ErrNotFound for an unknown session.
	UsedCallIDs(ctx context.Context, sessionID string, ids []string) ([]string, error)

	// LoadCheckpoint returns the session's checkpoint, saved by a Write: the
	// derived state of its log up to Seq, so that a reader rebuilds the rest
	// from the events after Seq alone. A session without one returns a zero
	// Checkpoint; an unknown session ErrNotFound.
	LoadCheckpoint(ctx context.Context, sessionID string) (Checkpoint, error)

	// AcquireLease takes the session's lease for owner, for ttl: it succeeds
	// when the lease is free, expired or already owner's (then it renews it,
	// keeping its Token), and fails with ErrLeased while another owner holds
	// it, or ErrNotFound. Owners must be unique to each holder (a process or
	// replica id and a random part). A lease that changes hands gets a
	// greater Token; a Write with Lease set commits only while that token is
	// the session's (fencing), so a holder that stalled past its ttl cannot
	// interleave its writes with the next holder's. Leases expire by ttl,
	// which is what frees the lease of a crashed holder.
	AcquireLease(ctx context.Context, sessionID, owner string, ttl time.Duration) (Lease, error)

	// ReleaseLease frees a lease its holder no longer needs. It fails with
	// ErrLeaseLost when the lease is no longer the session's, or ErrNotFound.
	ReleaseLease(ctx context.Context, l Lease) error

	// ListSessions returns a page of sessions, newest first (by CreatedAt,
	// then ID), with LastSeq and UpdatedAt; see [SessionFilter].
	ListSessions(ctx context.Context, f SessionFilter) (SessionPage, error)

	// DeleteSession deletes the session: its header, events, checkpoint and
	// lease, in one transaction. Waits on it return ErrNotFound; so do later
	// writes to it. It fails with ErrNotFound when no session has the id.
	DeleteSession(ctx context.Context, id string) error

	// Prune deletes the sessions a retention policy no longer keeps, the least
	// recently updated first, and returns how many it deleted. It never
	// deletes a session whose lease is held and unexpired. It works in small
	// transactions, so it can run in the background beside the writers.
	Prune(ctx context.Context, r Retention) (int, error)

	// Close commits the writes already submitted, then releases the store.
	// Waits in progress return ErrClosed; later calls fail with ErrClosed.
	Close() error
}

// BoundedReader is a store that bounds a read of a log by the size of its
// events as well as by their number; every store of this module is one. A
// reader that does not know how large the next events are (a log of small
// events may turn to multi-megabyte tool results) can then read in pages of
// thousands of events without risking memory, instead of a few at a time.
type BoundedReader interface {
	// EventsWithin is Events, but stops after the event whose Data brings
	// the total of the events returned to maxBytes or more (no byte bound
	// when maxBytes <= 0): it returns the longest prefix of what Events
	// would return whose Data, without its last event, total less than
	// maxBytes. So it returns at least one event when any follow after.
	EventsWithin(ctx context.Context, sessionID string, after int64, limit, maxBytes int) ([]Event, error)
}

// Pages reads a session's log after after, in order, a page at a time, and
// calls fn with each page until fn returns false or the log ends. A page
// holds at most limit events (all when limit <= 0) and, from a
// BoundedReader, stops at maxBytes (EventsWithin); from another store it is
// limit events whatever their size. It fails with ErrNotFound for an unknown
// session.
func Pages(ctx context.Context, s Store, sessionID string, after int64, limit, maxBytes int, fn func([]Event) bool) error {
	br, bounded := s.(BoundedReader)
	for {
		var page []Event
		var err error
		if bounded {
			page, err = br.EventsWithin(ctx, sessionID, after, limit, maxBytes)
		} else {
			page, err = s.Events(ctx, sessionID, after, limit)
		}
		if err != nil || len(page) == 0 {
			return err
		}
		if !fn(page) {
			return nil
		}
		size := 0
		for _, e := range page {
			size += len(e.Data)
		}
		byCount := limit > 0 && len(page) == limit
		byBytes := bounded && maxBytes > 0 && size >= maxBytes
		if !byCount && !byBytes {
			return nil // the page ended with the log
		}
		after = page[len(page)-1].Seq
	}
}

// WithinBytes returns how many of events a read bounded by maxBytes keeps
// when it has already read total bytes, and the new total: what a store's
// EventsWithin keeps (see BoundedReader).
func WithinBytes(events []Event, total, maxBytes int) (keep, newTotal int) {
	for i, e := range events {
		if maxBytes > 0 && total >= maxBytes {
			return i, total
		}
		total += len(e.Data)
	}
	return len(events), total
}

// Durability says what a commit survives.
type Durability string

const (
	// DurabilityFull, the default: a commit is flushed to stable storage
	// before its writes are reported durable, so it survives a power loss
	// (SQLite synchronous=FULL; PostgreSQL synchronous_commit=on, or the
	// server's stricter setting). One flush per group commit.
	DurabilityFull Durability = "full"
	// DurabilityProcess: a commit survives the crash of the process (the
	// operating system holds it) but the last commits before a power loss or
	// an operating-system crash may be lost, never partly (SQLite
	// synchronous=NORMAL in WAL mode; PostgreSQL synchronous_commit=off for
	// the store's connections, where a server crash loses the last commits
	// of up to three times wal_writer_delay).
	DurabilityProcess Durability = "process"
)

// ParseDurability reads "full" or "process"; "" is full.
func ParseDurability(s string) (Durability, error) {
	switch d := Durability(s); d {
	case "", DurabilityFull:
		return DurabilityFull, nil
	case DurabilityProcess:
		return d, nil
	}
	return "", fmt.Errorf("session: durability %q: want full or process", s)
}

// Options configure a store; the zero value is the default.
type Options struct {
	// Durability: DurabilityFull when empty. The memory store ignores it.
	Durability Durability
}

// CheckOptions returns the one Options of an Open function's variadic
// parameter, checked, with its Durability filled in: it fails when there
// are several or the durability is unknown.
func CheckOptions(opts []Options) (Options, error) {
	switch len(opts) {
	case 0:
		return Options{Durability: DurabilityFull}, nil
	case 1:
		d, err := ParseDurability(string(opts[0].Durability))
		return Options{Durability: d}, err
	}
	return Options{}, errors.New("session: more than one Options")
}

// maxIDLen bounds session ids.
const maxIDLen = 256

// PrepareSession checks a session for CreateSession (its ID with CheckID,
// its Scope UTF-8 text) and normalizes its CreatedAt: now when zero, UTC,
// microsecond precision.
func PrepareSession(s Session, now time.Time) (Session, error) {
	if err := CheckID(s.ID); err != nil {
		return Session{}, err
	}
	if !utf8.ValidString(s.Scope) || strings.IndexByte(s.Scope, 0) >= 0 {
		return Session{}, errors.New("session: scope is not valid UTF-8 text")
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	s.CreatedAt = s.CreatedAt.UTC().Truncate(time.Microsecond)
	return s, nil
}

// CheckID checks a session id: non-empty UTF-8 text of at most 256 bytes
// with no control characters.
func CheckID(id string) error {
	if id == "" {
		return errors.New("session: session id is empty")
	}
	if len(id) > maxIDLen {
		return fmt.Errorf("session: session id is longer than %d bytes", maxIDLen)
	}
	if !utf8.ValidString(id) {
		return errors.New("session: session id is not valid UTF-8")
	}
	for _, r := range id {
		if r < ' ' || r == 0x7f {
			return fmt.Errorf("session: session id %q has a control character", id)
		}
	}
	return nil
}
