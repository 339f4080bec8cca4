package session

import (
	"context"
	"sync/atomic"
)

// Core is what every store built on a Committer and Waiters has in common.
// Embedded in a backend's store, it implements CreateSession, Append,
// Submit, Wait, WriteErr and Stats from the backend's commit and last seq,
// and keeps the store's closed state, which the backend's own methods check
// first (Closed). The backend implements the rest of Store, and calls Stop
// first in its Close.
type Core struct {
	waiters *Waiters
	commits *Committer
	last    func(ctx context.Context, id string) (int64, error)
	closed  atomic.Bool
}

// NewCore starts the group commit of a store: commit is the backend's
// commit of a batch (see Committer); after a batch committed, w wakes the
// waiters of the sessions it wrote, then committed (which may be nil) is
// told of it. last returns a session's last seq, ErrNotFound for an unknown
// session, ErrClosed once the store closed.
func NewCore(w *Waiters, commit func(batch []*Pending) error, committed func(batch []*Pending), last func(ctx context.Context, id string) (int64, error)) *Core {
	return &Core{waiters: w, last: last, commits: NewCommitter(commit, func(batch []*Pending) {
		w.Committed(batch)
		if committed != nil {
			committed(batch)
		}
	})}
}

// Closed reports whether the store is closed: a backend's method then
// returns ErrClosed.
func (c *Core) Closed() bool { return c.closed.Load() }

// Stop closes the store's core: later calls fail with ErrClosed, waits in
// progress return it, and the writes already submitted are committed. It
// returns false when the store was closed already. A backend's Close calls
// it first, then releases its database.
func (c *Core) Stop() bool {
	if c.closed.Swap(true) {
		return false
	}
	c.waiters.Close()
	c.commits.Close()
	return true
}

// CreateSession implements Store.
func (c *Core) CreateSession(ctx context.Context, s Session) error {
	return CreateBySubmit(ctx, c, s)
}

// Append implements Store.
func (c *Core) Append(ctx context.Context, sessionID string, events ...Event) ([]Event, error) {
	return AppendBySubmit(ctx, c, c.last, sessionID, events)
}

// Submit implements Store.
func (c *Core) Submit(ctx context.Context, w Write) *Ticket {
	if c.closed.Load() {
		return failed(ErrClosed)
	}
	return c.commits.Submit(ctx, w)
}

// Wait implements Store.
func (c *Core) Wait(ctx context.Context, sessionID string, after int64) error {
	if c.closed.Load() {
		return ErrClosed
	}
	return c.waiters.Wait(ctx, sessionID, after, c.last)
}

// WriteErr implements WriteHealth.
func (c *Core) WriteErr() error { return c.commits.WriteErr() }

// Stats returns the store's group-commit counts.
func (c *Core) Stats() CommitStats { return c.commits.Stats() }
