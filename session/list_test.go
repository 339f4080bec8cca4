package session

import (
	"errors"
	"testing"
	"time"
)

func TestCursorRoundTrip(t *testing.T) {
	for _, s := range []Session{
		{ID: "a", CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)},
		{ID: "with:colon and ✓", CreatedAt: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "x", CreatedAt: time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)},
	} {
		c, ok, err := parseCursor(cursorAfter(s))
		if err != nil || !ok || c.ID != s.ID || c.Created != s.CreatedAt.UnixMicro() {
			t.Errorf("cursor of %+v came back as %+v, %v, %v", s, c, ok, err)
		}
	}
	if _, ok, err := parseCursor(""); ok || err != nil {
		t.Fatalf("the empty cursor: %v, %v", ok, err)
	}
}

// FuzzParseCursor: cursors come from clients. A cursor either is refused
// with ErrBadCursor or names a position that renders back to itself.
func FuzzParseCursor(f *testing.F) {
	f.Add(cursorAfter(Session{ID: "s1", CreatedAt: time.Now()}))
	f.Add("MTIz")
	f.Add("LTE6eA")
	f.Add("MDA6eA")
	f.Fuzz(func(t *testing.T, s string) {
		c, ok, err := parseCursor(s)
		if err != nil {
			if !errors.Is(err, ErrBadCursor) {
				t.Fatalf("parseCursor(%q): %v", s, err)
			}
			return
		}
		if !ok {
			if s != "" {
				t.Fatalf("parseCursor(%q) is the first page", s)
			}
			return
		}
		if CheckID(c.ID) != nil {
			t.Fatalf("parseCursor(%q) accepted id %q", s, c.ID)
		}
		if again, _, err := parseCursor(c.String()); err != nil || again != c {
			t.Fatalf("cursor %+v renders to %q, which parses to %+v, %v", c, c.String(), again, err)
		}
	})
}
