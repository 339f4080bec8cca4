package sessiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
)

// testListSessions: newest first, paged without gaps or repeats, filtered by
// scope, with LastSeq and UpdatedAt; bad cursors and limits refused.
func testListSessions(t *testing.T, s session.Store) {
	ctx := context.Background()
	if p, err := s.ListSessions(ctx, session.SessionFilter{}); err != nil || len(p.Sessions) != 0 || p.Next != "" {
		t.Fatalf("ListSessions of an empty store = %+v, %v", p, err)
	}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	type row struct {
		id, scope string
		created   time.Time
	}
	var all []row
	for i := 0; i < 23; i++ {
		r := row{id: fmt.Sprintf("s%02d", i), scope: []string{"a", "b", "c"}[i%3], created: base.Add(time.Duration(i/2) * time.Minute)}
		all = append(all, r) // pairs share a CreatedAt: the id breaks the tie
		if err := s.CreateSession(ctx, session.Session{ID: r.id, Scope: r.scope, CreatedAt: r.created}); err != nil {
			t.Fatal(err)
		}
	}
	mustAppend(t, s, "s05", contextEvent("1"), contextEvent("2"))
	sort.Slice(all, func(i, j int) bool {
		if !all[i].created.Equal(all[j].created) {
			return all[i].created.After(all[j].created)
		}
		return all[i].id > all[j].id
	})
	list := func(f session.SessionFilter) []session.Session {
		t.Helper()
		var out []session.Session
		for pages := 0; ; pages++ {
			p, err := s.ListSessions(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if f.Limit > 0 && len(p.Sessions) > f.Limit || p.Next != "" && len(p.Sessions) == 0 || pages > 100 {
				t.Fatalf("page of %d sessions for limit %d, next %q", len(p.Sessions), f.Limit, p.Next)
			}
			out = append(out, p.Sessions...)
			if p.Next == "" {
				return out
			}
			f.Cursor = p.Next
		}
	}
	for _, limit := range []int{0, 1, 2, 5, 23, 1000} {
		for _, scope := range []string{"", "a", "b", "nope"} {
			var want []string
			for _, r := range all {
				if scope == "" || r.scope == scope {
					want = append(want, r.id)
				}
			}
			var got []string
			for _, sess := range list(session.SessionFilter{Scope: scope, Limit: limit}) {
				got = append(got, sess.ID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("ListSessions(scope %q, limit %d) = %v, want %v", scope, limit, got, want)
			}
		}
	}
	for _, sess := range list(session.SessionFilter{}) {
		want := int64(0)
		if sess.ID == "s05" {
			want = 2
		}
		if sess.LastSeq != want || sess.UpdatedAt.Before(sess.CreatedAt) || sess.CreatedAt.Location() != time.UTC {
			t.Fatalf("listed %+v, want LastSeq %d", sess, want)
		}
	}
	// A page boundary holds while newer sessions are created.
	p, err := s.ListSessions(ctx, session.SessionFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	create(t, s, "newest")
	rest := list(session.SessionFilter{Cursor: p.Next})
	if len(p.Sessions)+len(rest) != len(all) || rest[0].ID != all[10].id {
		t.Fatalf("after a create, the next page starts at %s (%d + %d), want %s", rest[0].ID, len(p.Sessions), len(rest), all[10].id)
	}
	for _, bad := range []string{"x", "!!!", "MTIz", "YWJjOmRlZg", "OTk5OTk5OTk5OTk5OTk5OTk5OTk6eA"} {
		if _, err := s.ListSessions(ctx, session.SessionFilter{Cursor: bad}); !errors.Is(err, session.ErrBadCursor) {
			t.Errorf("cursor %q: err = %v, want ErrBadCursor", bad, err)
		}
	}
	for _, limit := range []int{-1, session.MaxPageSize + 1} {
		if _, err := s.ListSessions(ctx, session.SessionFilter{Limit: limit}); err == nil {
			t.Errorf("limit %d accepted", limit)
		}
	}
}

// testDeleteSession: a deleted session loses its events, checkpoint and
// lease, wakes its waiters, and its id can be taken again.
func testDeleteSession(t *testing.T, s session.Store) {
	ctx := context.Background()
	if err := s.DeleteSession(ctx, "ghost"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("DeleteSession(unknown): err = %v, want ErrNotFound", err)
	}
	create(t, s, "d")
	create(t, s, "keep")
	mustAppend(t, s, "keep", contextEvent("kept"))
	if _, err := wait(t, s.Submit(ctx, session.Write{SessionID: "d", Events: []session.Event{
		contextEvent("1"), callEvent(t, 1, 1, "c1", "util_echo", `{}`),
	}, Checkpoint: &session.Checkpoint{State: json.RawMessage(`{}`)}})); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AcquireLease(ctx, "d", "holder", time.Hour); err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, waitLimit)
		defer cancel()
		waitErr <- s.Wait(ctx, "d", 2)
	}()
	if err := s.DeleteSession(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if err := <-waitErr; !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Wait across DeleteSession: err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetSession(ctx, "d"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("GetSession after delete: %v", err)
	}
	if _, err := s.Events(ctx, "d", 0, 0); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Events after delete: %v", err)
	}
	if _, err := s.LoadCheckpoint(ctx, "d"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("LoadCheckpoint after delete: %v", err)
	}
	if _, err := s.Append(ctx, "d", contextEvent("late")); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Append after delete: %v", err)
	}
	if err := s.DeleteSession(ctx, "d"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("second DeleteSession: err = %v, want ErrNotFound", err)
	}
	if open, err := s.OpenCalls(ctx); err != nil || len(open) != 0 {
		t.Fatalf("OpenCalls after delete = %+v, %v", open, err)
	}
	// The id is free again, with nothing of the old session.
	create(t, s, "d")
	if got := mustAppend(t, s, "d", contextEvent("again")); got[0].Seq != 1 {
		t.Fatalf("the recreated session numbers from %d", got[0].Seq)
	}
	if cp, err := s.LoadCheckpoint(ctx, "d"); err != nil || cp.State != nil {
		t.Fatalf("recreated session has checkpoint %+v, %v", cp, err)
	}
	if _, err := s.AcquireLease(ctx, "d", "other", time.Hour); err != nil {
		t.Fatalf("recreated session is still leased: %v", err)
	}
	if got := Texts(t, mustEvents(t, s, "keep", 0, 0)); !slices.Equal(got, []string{"kept"}) {
		t.Fatalf("deleting d changed keep: %v", got)
	}
}

// testPrune: age and count limits, least recently updated first, never a
// leased session, in several rounds.
func testPrune(t *testing.T, s session.Store) {
	ctx := context.Background()
	if _, err := s.Prune(ctx, session.Retention{MaxAge: -time.Hour}); err == nil {
		t.Fatal("a negative MaxAge was accepted")
	}
	if n, err := s.Prune(ctx, session.Retention{}); err != nil || n != 0 {
		t.Fatalf("Prune without limits = %d, %v", n, err)
	}
	now := time.Now().UTC()
	// 250 old sessions (more than one round), updated d days ago, oldest
	// first; and two fresh ones, one created long ago but written to now.
	const old = 250
	for i := 0; i < old; i++ {
		at := now.Add(-time.Duration(old-i) * time.Hour * 24)
		id := fmt.Sprintf("old%03d", i)
		if err := s.CreateSession(ctx, session.Session{ID: id, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			e := contextEvent("then")
			e.Time = at
			mustAppend(t, s, id, e)
		}
	}
	if err := s.CreateSession(ctx, session.Session{ID: "revived", CreatedAt: now.Add(-1000 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, "revived", contextEvent("now"))
	create(t, s, "fresh")
	// A leased old session survives every limit.
	if _, err := s.AcquireLease(ctx, "old000", "stepper", time.Hour); err != nil {
		t.Fatal(err)
	}

	// Older than 100.5 days: old000..old149, but the leased old000.
	n, err := s.Prune(ctx, session.Retention{MaxAge: 100*24*time.Hour + 12*time.Hour})
	if err != nil || n != 149 {
		t.Fatalf("Prune(MaxAge) = %d, %v; want 149", n, err)
	}
	wantIDs := []string{"old000"}
	for i := 150; i < old; i++ {
		wantIDs = append(wantIDs, fmt.Sprintf("old%03d", i))
	}
	wantIDs = append(wantIDs, "revived", "fresh")
	checkIDs(t, s, wantIDs)
	if _, err := s.Events(ctx, "old050", 0, 0); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("a pruned session's events: %v", err)
	}

	// Keep the 10 most recently updated: fresh, revived and old242..old249;
	// old000 is leased and stays too.
	n, err = s.Prune(ctx, session.Retention{MaxCount: 10})
	if err != nil || n != 92 {
		t.Fatalf("Prune(MaxCount 10) = %d, %v; want 92 (old150..old241)", n, err)
	}
	wantIDs = []string{"old000"}
	for i := 242; i < old; i++ {
		wantIDs = append(wantIDs, fmt.Sprintf("old%03d", i))
	}
	wantIDs = append(wantIDs, "revived", "fresh")
	checkIDs(t, s, wantIDs)
	if n, err := s.Prune(ctx, session.Retention{MaxCount: 10, MaxAge: 1000 * 24 * time.Hour}); err != nil || n != 0 {
		t.Fatalf("a second Prune = %d, %v; want 0", n, err)
	}
}

// checkIDs asserts which sessions the store holds.
func checkIDs(t *testing.T, s session.Store, want []string) {
	t.Helper()
	var got []string
	f := session.SessionFilter{Limit: session.MaxPageSize}
	for {
		p, err := s.ListSessions(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, sess := range p.Sessions {
			got = append(got, sess.ID)
		}
		if p.Next == "" {
			break
		}
		f.Cursor = p.Next
	}
	sort.Strings(got)
	want = slices.Clone(want)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the store holds %d sessions %v, want %d %v", len(got), got, len(want), want)
	}
}
