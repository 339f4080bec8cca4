package sessiontest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/codemode/codemode/session"
)

// testUsedCallIDs: only tool/call ids count (a tool/result's or an event
// of another type does not), of this session only; an unknown session is
// ErrNotFound.
func testUsedCallIDs(t *testing.T, s session.Store) {
	ctx := context.Background()
	create(t, s, "a")
	create(t, s, "b")
	mustAppend(t, s, "a", callEvent(t, 1, 1, "c1", "x", "{}"), resultEvent(t, "c1", false), callEvent(t, 1, 2, "c2", "x", "{}"))
	mustAppend(t, s, "b", callEvent(t, 1, 1, "c3", "x", "{}"))
	mustAppend(t, s, "a", resultEvent(t, "only-a-result", false))
	got, err := s.UsedCallIDs(ctx, "a", []string{"c1", "c2", "c3", "only-a-result", "new"})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"c1", "c2"}) {
		t.Fatalf("UsedCallIDs = %v, want [c1 c2]", got)
	}
	if got, err := s.UsedCallIDs(ctx, "a", nil); err != nil || len(got) != 0 {
		t.Fatalf("no ids: %v %v", got, err)
	}
	if _, err := s.UsedCallIDs(ctx, "nope", []string{"c1"}); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}
