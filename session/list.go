package session

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Page sizes of ListSessions.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// SessionFilter selects a page of ListSessions.
type SessionFilter struct {
	// Scope, when set, keeps only that scope's sessions.
	Scope string
	// Cursor continues after the page that returned it as Next; empty for
	// the first page. Sessions created meanwhile never shift a page: they
	// are newer than every cursor.
	Cursor string
	// Limit bounds the page: DefaultPageSize when 0, at most MaxPageSize.
	Limit int
}

// SessionPage is one page of sessions, newest first.
type SessionPage struct {
	Sessions []Session
	// Next is the cursor of the following page; empty on the last page.
	Next string
}

// Retention is what Prune keeps; a zero field sets no limit.
type Retention struct {
	// MaxAge deletes the sessions not updated (see Session.UpdatedAt) for
	// longer than it.
	MaxAge time.Duration
	// MaxCount keeps at most that many sessions: the most recently updated.
	MaxCount int
}

// Page checks f and returns what a store's ListSessions reads: limit, the
// page's size, and after, the position the page starts after (nil for the
// first page). A store fetches the limit+1 newest sessions (by CreatedAt,
// then ID, descending) of f.Scope that come after after, and returns
// PageOf them. Page fails with ErrBadCursor for a cursor no page returned.
func (f SessionFilter) Page() (limit int, after *Cursor, err error) {
	if limit, err = pageLimit(f.Limit); err != nil {
		return 0, nil, err
	}
	c, ok, err := parseCursor(f.Cursor)
	if err != nil || !ok {
		return limit, nil, err
	}
	return limit, &c, nil
}

// pageLimit checks a filter's limit and returns the page size.
func pageLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultPageSize, nil
	case limit < 0 || limit > MaxPageSize:
		return 0, fmt.Errorf("session: page limit %d is outside 1..%d", limit, MaxPageSize)
	}
	return limit, nil
}

// Cursor is the position after a listed session: its CreatedAt (unix
// microseconds) and ID. A page after it lists the sessions with a smaller
// (Created, ID), IDs compared bytewise.
type Cursor struct {
	Created int64
	ID      string
}

func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.Created, 10) + ":" + c.ID))
}

func cursorAfter(s Session) string {
	return Cursor{Created: s.CreatedAt.UnixMicro(), ID: s.ID}.String()
}

// parseCursor reads a cursor; ok is false for the empty (first page) one.
func parseCursor(s string) (c Cursor, ok bool, err error) {
	if s == "" {
		return Cursor{}, false, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, false, ErrBadCursor
	}
	created, id, found := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(created, 10, 64)
	if !found || err != nil || CheckID(id) != nil || strconv.FormatInt(n, 10) != created {
		return Cursor{}, false, ErrBadCursor
	}
	if t := time.UnixMicro(n).UTC(); t.Year() < 1 || t.Year() > 9999 {
		return Cursor{}, false, ErrBadCursor
	}
	return Cursor{Created: n, ID: id}, true, nil
}

// PageOf makes a page of rows, the limit+1 sessions a store fetched for
// SessionFilter.Page's limit, newest first: it keeps limit of them and, when
// there were more, sets Next.
func PageOf(rows []Session, limit int) SessionPage {
	if len(rows) > limit {
		return SessionPage{Sessions: rows[:limit], Next: cursorAfter(rows[limit-1])}
	}
	return SessionPage{Sessions: rows}
}

// PruneChunk is how many sessions Prune deletes per transaction, so that
// writers wait for at most one such transaction.
const PruneChunk = 100

// CheckRetention checks a retention policy (no negative limit); a
// store's Prune calls it first.
func CheckRetention(r Retention) error {
	if r.MaxAge < 0 || r.MaxCount < 0 {
		return fmt.Errorf("session: retention %+v has a negative limit", r)
	}
	return nil
}
