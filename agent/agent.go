package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/codemode/codemode/internal/positive"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/session"
)

// DefaultApprovalTimeout is how long an ask waits for an answer when
// Options.ApprovalTimeout is zero (approvals.timeout).
const DefaultApprovalTimeout = 5 * time.Minute

// DefaultHold is how long a run's ask waits before the run suspends, when
// Options.Hold is zero (approvals.hold): longer than a person at hand takes
// to answer, short enough that nobody holds a request open for long.
const DefaultHold = 30 * time.Second

// Errors of the agent; test with errors.Is. A session that does not exist is
// session.ErrNotFound.
var (
	// ErrInvalidCalls: a step's tool calls are malformed (an empty or
	// duplicate id, or an id the session already used). Nothing was appended.
	ErrInvalidCalls = errors.New("agent: invalid tool calls")
	// ErrNotFound: no pending approval has that id (unknown, or already answered).
	ErrNotFound = errors.New("agent: approval not found")
	// ErrAnswered: the approval was answered already. It is also an
	// ErrNotFound (no pending approval has the id).
	ErrAnswered = fmt.Errorf("%w: already answered", ErrNotFound)
	// ErrSuspended: the session has a run_code call that suspended and has
	// not resumed to its result; no step can follow it until it has.
	ErrSuspended = errors.New("agent: the session has a suspended run")
	// ErrNoCall: the session has no top-level call with that id.
	ErrNoCall = errors.New("agent: call not found")
)

// Options configure an Agent. The zero value works.
type Options struct {
	// ApprovalTimeout bounds how long an ask waits for an answer; then it is
	// denied and logged as decision "timeout". Default DefaultApprovalTimeout.
	ApprovalTimeout time.Duration
	// Hold is how long a resumed run's asks wait before it suspends again
	// (RunOptions.Hold for a resumed run). Default DefaultHold.
	Hold time.Duration
	// MaxParallel is the window for overlapping concurrency-safe calls of
	// one step. Default runtime.DefaultWindow.
	MaxParallel int
	// Logger receives store failures the loop cannot return (nested events).
	// Default slog.Default().
	Logger *slog.Logger
	// Now is the clock Recover compares event times with. Default time.Now.
	Now func() time.Time
	// NewID mints approval ids and the call ids of Run. It must return
	// unique, non-empty strings. Default session.NewID.
	NewID func() string
	// Leases makes each step hold its session's lease in the store, so that
	// agents in several processes sharing the store (replicas on one
	// PostgreSQL) never interleave one session's steps; a step waits while
	// another holds it. Within one process steps of a session are
	// serialized either way.
	Leases bool
	// LeaseTTL is how long a lease lasts without renewal: a crashed holder's
	// lease lapses after it, and RecoverLapsed closes the calls it left.
	// Default DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Approver, when set, is asked every ask as soon as it is logged and may
	// answer it at once (see Approver). Nil: asks wait in the log for
	// Agent.Answer.
	Approver Approver
}

// Agent runs steps of sessions against a runtime and logs them in a store.
// It is safe for concurrent use; steps of one session are serialized within
// the process, and across processes sharing the store with Options.Leases.
type Agent struct {
	rt    *runtime.Runtime
	store session.Store
	opts  Options
	owner string // this agent's name as a lease holder

	mu    sync.Mutex
	steps map[string]*sessionLock // sessions with a step running or waiting; guarded by mu
	// states caches each session's folded log state; guarded by mu, and
	// each state by its session's step lock.
	states map[string]*logState
	leases map[string]*heldLease // leases held by running steps; guarded by mu
	// answering serializes Answer within the process, so that two answers
	// racing here cannot both pass the "still pending" check.
	answering sync.Mutex
	// resuming holds a token per run being resumed (MaxResuming).
	resuming chan struct{}
	// resumes guards resumesClosed; resumesRunning counts the resumptions
	// started (StopResuming waits for them).
	resumes        sync.Mutex
	resumesClosed  bool
	resumesRunning sync.WaitGroup
}

// New returns an agent over rt that logs to store.
func New(rt *runtime.Runtime, store session.Store, opts Options) *Agent {
	opts.ApprovalTimeout = positive.Or(opts.ApprovalTimeout, DefaultApprovalTimeout)
	opts.Hold = positive.Or(opts.Hold, DefaultHold)
	opts.MaxParallel = positive.Or(opts.MaxParallel, runtime.DefaultWindow)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewID == nil {
		opts.NewID = session.NewID
	}
	opts.LeaseTTL = positive.Or(opts.LeaseTTL, DefaultLeaseTTL)
	return &Agent{
		rt: rt, store: store, opts: opts, owner: "agent-" + session.NewID(),
		steps: map[string]*sessionLock{}, states: map[string]*logState{}, leases: map[string]*heldLease{},
		resuming: make(chan struct{}, MaxResuming),
	}
}

// sessionLock is a mutex that a waiter can give up on when its context ends.
type sessionLock struct {
	ch   chan struct{} // holds one token while locked
	refs int           // holders and waiters; guarded by Agent.mu
}

// lock serializes steps of one session in this process.
func (a *Agent) lock(ctx context.Context, sessionID string) (unlock func(), err error) {
	l, release := a.sessionLock(sessionID)
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// tryLock is lock without waiting: ok is false when the session is locked.
func (a *Agent) tryLock(sessionID string) (unlock func(), ok bool) {
	l, release := a.sessionLock(sessionID)
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, true
	default:
		release()
		return nil, false
	}
}

// sessionLock returns the session's lock, referenced until release.
func (a *Agent) sessionLock(sessionID string) (l *sessionLock, release func()) {
	a.mu.Lock()
	l = a.steps[sessionID]
	if l == nil {
		l = &sessionLock{ch: make(chan struct{}, 1)}
		a.steps[sessionID] = l
	}
	l.refs++
	a.mu.Unlock()
	return l, func() {
		a.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(a.steps, sessionID)
		}
		a.mu.Unlock()
	}
}

// entry is one event to log: a type and its payload (a payload type of
// package session).
type entry struct {
	typ     string
	payload any
}

// appendEvents appends entries to the session log in one atomic Append,
// wrapping failures with what was being logged.
func (a *Agent) appendEvents(ctx context.Context, sessionID, what string, entries ...entry) ([]session.Event, error) {
	return a.appendFenced(ctx, sessionID, what, nil, entries...)
}

// appendFenced is appendEvents fenced by lease (nil: none): it fails with
// session.ErrLeaseLost once the lease is no longer the session's.
func (a *Agent) appendFenced(ctx context.Context, sessionID, what string, lease *session.Lease, entries ...entry) ([]session.Event, error) {
	events, err := entriesEvents(what, entries...)
	if err != nil {
		return nil, err
	}
	var out []session.Event
	if lease == nil {
		out, err = a.store.Append(ctx, sessionID, events...)
	} else {
		out, err = a.store.Submit(ctx, session.Write{SessionID: sessionID, Events: events, Lease: lease}).Wait(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("agent: append %s to session %q: %w", what, sessionID, err)
	}
	return out, nil
}
