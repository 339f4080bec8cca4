package session

import (
	"context"
	"sync"
)

// Waiters is what a store's Wait is built on: it wakes in-process waiters
// when a session gets new events. The backend must call Notify after any
// change to a session it made (Committed does so for a committed batch),
// WakeAll when a change it cannot attribute may have happened (another
// process wrote, a notification may have been lost), and Close when the
// store closes. Wait then guarantees that no append is missed: a waiter
// watches before it checks the log, so a change between its check and its
// wait wakes it.
type Waiters struct {
	mu       sync.Mutex
	sessions map[string]*watchers // guarded by mu
	all      chan struct{}        // closed by WakeAll; guarded by mu
	done     chan struct{}        // closed by Close
	once     sync.Once
}

type watchers struct {
	ch chan struct{} // closed when the session changes
	n  int           // waiters holding ch
}

// NewWaiters returns Waiters with no one waiting.
func NewWaiters() *Waiters {
	return &Waiters{sessions: map[string]*watchers{}, all: make(chan struct{}), done: make(chan struct{})}
}

// watch returns channels closed on the next change to the session and on the
// next WakeAll, and a release to call when done with them.
func (h *Waiters) watch(id string) (session, all <-chan struct{}, release func()) {
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

// Notify wakes the session's waiters.
func (h *Waiters) Notify(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.sessions[id]; w != nil {
		close(w.ch)
		delete(h.sessions, id)
	}
}

// Committed wakes the waiters of every session a committed batch wrote
// (created, or appended to), once each: a Committer's committed callback
// calls it.
func (h *Waiters) Committed(batch []*Pending) {
	for i, p := range batch {
		if p.Err != nil || len(p.Events) == 0 && p.Create == nil {
			continue
		}
		if i > 0 && batch[i-1].SessionID == p.SessionID {
			continue // woken already
		}
		h.Notify(p.SessionID)
	}
}

// WakeAll wakes every waiter, so each checks its log again: for changes the
// store cannot attribute to a session (another process wrote, a
// notification may have been missed).
func (h *Waiters) WakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.all)
	h.all = make(chan struct{})
}

// Waiting reports whether anyone waits, so that a store polls for other
// processes' changes only then.
func (h *Waiters) Waiting() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions) > 0
}

// Close makes waits in progress, and later ones, return ErrClosed.
func (h *Waiters) Close() { h.once.Do(func() { close(h.done) }) }

// Wait implements Store.Wait given last, which returns the session's last
// seq, or ErrNotFound for an unknown session (ErrClosed once the store
// closed).
func (h *Waiters) Wait(ctx context.Context, id string, after int64, last func(context.Context, string) (int64, error)) error {
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
