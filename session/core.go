package session

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// Core is what every store built on a Committer and Waiters has in common.
// Embedded in a backend's store, it implements CreateSession, Append,
// Submit, Wait, WriteErr and Stats from the backend's commit and last seq,
// runs Prune's rounds (Core.Prune), and keeps the store's closed state,
// which the backend's own methods check first (Closed). The backend
// implements the rest of Store, and calls Stop first in its Close.
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

// Prune is a store's Prune, in rounds: it checks r, then runs round until
// one chooses fewer than PruneChunk sessions, the store closes, ctx ends or
// a round fails, and wakes the waiters of the sessions each round deleted.
// round deletes, in one transaction, up to PruneChunk sessions r no longer
// keeps and no live lease holds, the least recently updated first; it
// returns the ids it chose and how many of them it deleted.
func (c *Core) Prune(ctx context.Context, r Retention, round func(context.Context, Retention) (ids []string, deleted int, err error)) (int, error) {
	if err := CheckRetention(r); err != nil {
		return 0, err
	}
	total := 0
	for {
		if c.Closed() {
			return total, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
		ids, n, err := round(ctx, r)
		total += n
		if err != nil {
			return total, fmt.Errorf("session: prune: %w", err)
		}
		for _, id := range ids {
			c.waiters.Notify(id)
		}
		if len(ids) < PruneChunk {
			return total, nil
		}
	}
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

// Get serves a backend's GetSession: fetch returns the sessions with the id
// (none or one).
func (c *Core) Get(id string, fetch func() ([]Session, error)) (Session, error) {
	if c.Closed() {
		return Session{}, ErrClosed
	}
	got, err := fetch()
	if err != nil {
		return Session{}, fmt.Errorf("session: get %q: %w", id, err)
	}
	if len(got) == 0 {
		return Session{}, ErrNotFound
	}
	return got[0], nil
}

// List serves a backend's ListSessions: fetch returns the n newest sessions
// of f's scope ("": every scope) that come after after (nil: from the
// newest), as SessionFilter.Page describes.
func (c *Core) List(f SessionFilter, fetch func(after *Cursor, n int) ([]Session, error)) (SessionPage, error) {
	limit, after, err := f.Page()
	if err != nil {
		return SessionPage{}, err
	}
	if c.Closed() {
		return SessionPage{}, ErrClosed
	}
	got, err := fetch(after, limit+1)
	if err != nil {
		return SessionPage{}, fmt.Errorf("session: list: %w", err)
	}
	return PageOf(got, limit), nil
}

// LastSeq serves a backend's last seq of session id: scan reads it into
// last, failing with noRows (the database's error) when there is no such
// session.
func (c *Core) LastSeq(id string, noRows error, scan func(last *int64) error) (int64, error) {
	if c.Closed() {
		return 0, ErrClosed
	}
	var last int64
	err := scan(&last)
	if errors.Is(err, noRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		if c.Closed() {
			return 0, ErrClosed // closed while querying
		}
		return 0, fmt.Errorf("session: last seq of %q: %w", id, err)
	}
	return last, nil
}
