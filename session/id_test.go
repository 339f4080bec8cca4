package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
)

// Ids are 32 hex digits, unique, and sort in the order they were
// minted from one millisecond to the next.
func TestNewIDsSortByTime(t *testing.T) {
	seen := map[string]bool{}
	prev := session.NewID()
	for i := 0; i < 2000; i++ {
		id := session.NewID()
		if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("id %q is not 32 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("id %q minted twice", id)
		}
		seen[id] = true
		if id[:12] < prev[:12] {
			t.Fatalf("id %q minted after %q sorts before it", id, prev)
		}
		prev = id
	}
	before := session.NewID()
	time.Sleep(2 * time.Millisecond)
	if after := session.NewID(); after <= before {
		t.Fatalf("id %q minted 2 ms after %q does not sort after it", after, before)
	}
}
