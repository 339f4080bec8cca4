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

// cursor is the position after a listed session: its CreatedAt (unix
// microseconds) and ID.
type cursor struct {
	created int64
	id      string
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.created, 10) + ":" + c.id))
}

func cursorAfter(s Session) string {
	return cursor{created: s.CreatedAt.UnixMicro(), id: s.ID}.String()
}

// parseCursor reads a cursor; ok is false for the empty (first page) one.
func parseCursor(s string) (c cursor, ok bool, err error) {
	if s == "" {
		return cursor{}, false, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, false, ErrBadCursor
	}
	created, id, found := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(created, 10, 64)
	if !found || err != nil || checkID(id) != nil || strconv.FormatInt(n, 10) != created {
		return cursor{}, false, ErrBadCursor
	}
	if t := time.UnixMicro(n).UTC(); t.Year() < 1 || t.Year() > 9999 {
		return cursor{}, false, ErrBadCursor
	}
	return cursor{created: n, id: id}, true, nil
}

// page trims rows fetched with limit+1 to a page.
func page(rows []Session, limit int) SessionPage {
	if len(rows) > limit {
		return SessionPage{Sessions: rows[:limit], Next: cursorAfter(rows[limit-1])}
	}
	return SessionPage{Sessions: rows}
}

// pruneChunk is how many sessions Prune deletes per transaction.
const pruneChunk = 100

// checkRetention validates a retention policy.
func checkRetention(r Retention) error {
	if r.MaxAge < 0 || r.MaxCount < 0 {
		return fmt.Errorf("session: retention %+v has a negative limit", r)
	}
	return nil
}
