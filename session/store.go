package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Errors a Store returns; test with errors.Is.
var (
	// ErrNotFound: no session has that id.
	ErrNotFound = errors.New("session: not found")
	// ErrExists: CreateSession with an id already taken.
	ErrExists = errors.New("session: already exists")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("session: store closed")
)

// Session is a log's header. Scope names the registry scope its calls run in.
type Session struct {
	ID        string
	Scope     string
	CreatedAt time.Time
}

// OpenCall is a tool/call with no later tool/result with the same call id in
// its session: after a crash, the call recovery must close.
type OpenCall struct {
	SessionID string
	Call      ToolCall
	Seq       int64
}

// Store is the append-only session log. Implementations are safe for
// concurrent use.
type Store interface {
	// CreateSession creates an empty log. It fails with ErrExists when the id
	// is taken. A zero CreatedAt becomes now; it is kept in UTC with
	// microsecond precision.
	CreateSession(ctx context.Context, s Session) error

	// GetSession returns the session's header, or ErrNotFound.
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
	Append(ctx context.Context, sessionID string, events ...Event) ([]Event, error)

	// Events returns the session's events with Seq > after, in order, at most
	// limit of them (all when limit <= 0). It fails with ErrNotFound for an
	// unknown session.
	Events(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error)

	// Wait blocks until the session has an event with Seq > after and returns
	// nil, or returns ctx.Err() when ctx ends first, ErrNotFound for an
	// unknown session and ErrClosed when the store closes. Appends made through
	// other Store instances on the same database also wake it.
	Wait(ctx context.Context, sessionID string, after int64) error

	// OpenCalls returns every tool/call, across all sessions, that has no
	// later tool/result with the same call id in its session, ordered by
	// session id and then Seq. Crash recovery closes them.
	OpenCalls(ctx context.Context) ([]OpenCall, error)

	// Close releases the store. Waits in progress return ErrClosed; later calls
	// fail with ErrClosed.
	Close() error
}

// Open opens the store a URL names:
//
//	sqlite://codemode.db       a SQLite file, relative to the working directory
//	sqlite:///var/lib/x.db     an absolute path
//	sqlite://:memory:          a private in-memory SQLite database
//	postgres://user@host/db    PostgreSQL (also postgresql://…); pgx URL parameters apply
//	memory://                  an in-memory store for tests
func Open(ctx context.Context, url string) (Store, error) {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return nil, fmt.Errorf("session: store URL %q has no scheme: want sqlite://FILE, postgres://… or memory://", url)
	}
	switch strings.ToLower(scheme) {
	case "sqlite", "sqlite3":
		if rest == "" {
			return nil, fmt.Errorf("session: store URL %q names no file", url)
		}
		return OpenSQLite(ctx, rest)
	case "postgres", "postgresql":
		return OpenPostgres(ctx, url)
	case "memory", "mem":
		if rest != "" {
			return nil, fmt.Errorf("session: store URL %q: memory:// takes no path", url)
		}
		return NewMemory(), nil
	default:
		return nil, fmt.Errorf("session: store URL %q: unknown scheme %q: want sqlite, postgres or memory", url, scheme)
	}
}

// maxIDLen bounds session ids.
const maxIDLen = 256

// prepareSession validates a session for CreateSession and normalizes its time.
func prepareSession(s Session, now time.Time) (Session, error) {
	if err := checkID(s.ID); err != nil {
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

// checkID validates a session id: non-empty UTF-8 text of at most 256 bytes
// with no control characters.
func checkID(id string) error {
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

// hub wakes in-process waiters when a session gets new events. A waiter
// watches before it checks the log, so an append between the check and the
// wait is never missed.
type hub struct {
	mu       sync.Mutex
	sessions map[string]*watchers // guarded by mu
	all      chan struct{}        // closed by wakeAll; guarded by mu
	done     chan struct{}        // closed by close
	once     sync.Once
}

type watchers struct {
	ch chan struct{} // closed when the session changes
	n  int           // waiters holding ch
}

func newHub() *hub {
	return &hub{sessions: map[string]*watchers{}, all: make(chan struct{}), done: make(chan struct{})}
}

// watch returns channels closed on the next change to the session and on the
// next wakeAll, and a release to call when done with them.
func (h *hub) watch(id string) (session, all <-chan struct{}, release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.sessions[id]
	if w == nil {
		w = &watchers{ch: make(chan struct{})}
		h.sessions[id] = w
	}
	w.n++
	return w.ch, h.all, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if w.n--; w.n == 0 && h.sessions[id] == w {
			delete(h.sessions, id)
		}
	}
}

// notify wakes the session's waiters.
func (h *hub) notify(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.sessions[id]; w != nil {
		close(w.ch)
		delete(h.sessions, id)
	}
}

// wakeAll wakes every waiter, so each checks its log again: for changes the
// hub cannot attribute to a session (another process wrote, a notification
// may have been missed).
func (h *hub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.all)
	h.all = make(chan struct{})
}

// waiting reports whether any waiter is watching.
func (h *hub) waiting() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions) > 0
}

func (h *hub) close() { h.once.Do(func() { close(h.done) }) }

// wait implements Store.Wait over a hub and a function returning the session's
// last seq (ErrNotFound for an unknown session).
func (h *hub) wait(ctx context.Context, id string, after int64, last func(context.Context, string) (int64, error)) error {
	for {
		select {
		case <-h.done:
			return ErrClosed
		default:
		}
		session, all, release := h.watch(id)
		seq, err := last(ctx, id)
		if err != nil || seq > after {
			release()
			return err
		}
		select {
		case <-session:
		case <-all:
		case <-h.done:
		case <-ctx.Done():
			release()
			return ctx.Err()
		}
		release()
	}
}
