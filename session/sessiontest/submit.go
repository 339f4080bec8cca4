package sessiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
)

// testSubmitOrder: writes submitted without waiting take effect in the order
// submitted, per session, and their tickets resolve in that order.
func testSubmitOrder(t *testing.T, s session.Store) {
	ctx := context.Background()
	ids := []string{"a", "b", "c"}
	for _, id := range ids {
		create(t, s, id)
	}
	var tickets []*session.Ticket
	want := map[string][]string{}
	for i := 0; i < 300; i++ {
		id := ids[i%len(ids)]
		batch := []session.Event{contextEvent(fmt.Sprintf("%s%d", id, i))}
		want[id] = append(want[id], fmt.Sprintf("%s%d", id, i))
		if i%7 == 3 {
			batch = append(batch, contextEvent(fmt.Sprintf("%s%d+", id, i)))
			want[id] = append(want[id], fmt.Sprintf("%s%d+", id, i))
		}
		tickets = append(tickets, s.Submit(ctx, session.Write{SessionID: id, Events: batch}))
	}
	// Waiting for the last ticket is enough: every earlier one has resolved.
	if _, err := wait(t, tickets[len(tickets)-1]); err != nil {
		t.Fatal(err)
	}
	for i, tk := range tickets {
		select {
		case <-tk.Done():
		default:
			t.Fatalf("ticket %d of %d has not resolved after the last one did", i, len(tickets))
		}
	}
	for i, tk := range tickets {
		got, err := wait(t, tk)
		if err != nil {
			t.Fatalf("ticket %d: %v", i, err)
		}
		if len(got) == 0 || (len(got) == 2 && got[1].Seq != got[0].Seq+1) {
			t.Fatalf("ticket %d returned %+v", i, got)
		}
	}
	for _, id := range ids {
		if got := Texts(t, mustEvents(t, s, id, 0, 0)); !slices.Equal(got, want[id]) {
			t.Fatalf("session %s holds %v, want %v", id, got, want[id])
		}
		checkSeqs(t, s, id, len(want[id]))
	}
	if got, err := s.GetSession(ctx, "a"); err != nil || got.LastSeq != int64(len(want["a"])) {
		t.Fatalf("GetSession(a) = %+v, %v: want LastSeq %d", got, err, len(want["a"]))
	}
}

// testSubmitConcurrent: many goroutines submitting and waiting, each to its
// session and all to a shared one.
func testSubmitConcurrent(t *testing.T, s session.Store) {
	const workers, writes = 16, 20
	create(t, s, "shared")
	for w := 0; w < workers; w++ {
		create(t, s, fmt.Sprintf("w%d", w))
	}
	concurrently(t, workers, func(w int) error {
		id := fmt.Sprintf("w%d", w)
		ctx := context.Background()
		var own, shared []*session.Ticket
		for i := 0; i < writes; i++ {
			own = append(own, s.Submit(ctx, session.Write{SessionID: id, Events: []session.Event{contextEvent(fmt.Sprint(i))}}))
			shared = append(shared, s.Submit(ctx, session.Write{SessionID: "shared", Events: []session.Event{contextEvent(fmt.Sprintf("%d.%d", w, i))}}))
		}
		for i, tk := range own {
			got, err := tk.Wait(ctx)
			if err != nil {
				return err
			}
			if got[0].Seq != int64(i+1) {
				return fmt.Errorf("session %s: write %d got seq %d", id, i, got[0].Seq)
			}
		}
		last := int64(0)
		for i, tk := range shared {
			got, err := tk.Wait(ctx)
			if err != nil {
				return err
			}
			if got[0].Seq <= last {
				return fmt.Errorf("writer %d: shared write %d got seq %d after %d", w, i, got[0].Seq, last)
			}
			last = got[0].Seq
		}
		return nil
	})
	checkSeqs(t, s, "shared", workers*writes)
	for w := 0; w < workers; w++ {
		checkSeqs(t, s, fmt.Sprintf("w%d", w), writes)
	}
}

// testSubmitFailures: a write that cannot commit fails alone; the writes
// around it, in the same burst, commit; nothing of it is stored.
func testSubmitFailures(t *testing.T, s session.Store) {
	ctx := context.Background()
	create(t, s, "a")
	mustAppend(t, s, "a", contextEvent("first"))
	lease, err := s.AcquireLease(ctx, "a", "holder", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	stale := lease
	stale.Token--
	type tc struct {
		name string
		w    session.Write
		want error // nil: succeeds; errAny: fails some other way
	}
	ev := func(text string) []session.Event { return []session.Event{contextEvent(text)} }
	cases := []tc{
		{"ok 1", session.Write{SessionID: "a", Events: ev("ok 1")}, nil},
		{"unknown session", session.Write{SessionID: "ghost", Events: ev("lost")}, session.ErrNotFound},
		{"ok 2", session.Write{SessionID: "a", Events: ev("ok 2")}, nil},
		{"create taken", session.Write{SessionID: "a", Create: &session.Session{Scope: "x"}, Events: ev("lost")}, session.ErrExists},
		{"stale lease", session.Write{SessionID: "a", Lease: &stale, Events: ev("lost")}, session.ErrLeaseLost},
		{"other owner", session.Write{SessionID: "a", Lease: &session.Lease{Owner: "intruder", Token: lease.Token}, Events: ev("lost")}, session.ErrLeaseLost},
		{"fenced ok", session.Write{SessionID: "a", Lease: &lease, Events: ev("ok 3")}, nil},
		{"checkpoint past the log", session.Write{SessionID: "a", Checkpoint: &session.Checkpoint{Seq: 99, State: json.RawMessage(`{}`)}}, errAny},
		{"ok 4", session.Write{SessionID: "a", Events: ev("ok 4")}, nil},
		{"create new", session.Write{SessionID: "n", Create: &session.Session{Scope: "s"}, Events: ev("new 1")}, nil},
		{"create new again", session.Write{SessionID: "n", Create: &session.Session{}, Events: ev("lost")}, session.ErrExists},
		{"append to new", session.Write{SessionID: "n", Events: ev("new 2")}, nil},
	}
	for round := 0; round < 2; round++ { // the second round finds the sessions as the first left them
		tickets := make([]*session.Ticket, len(cases))
		for i, c := range cases {
			if round == 1 && c.w.Create != nil && c.want == nil {
				c.want = session.ErrExists
				cases[i] = c
			}
			tickets[i] = s.Submit(ctx, c.w)
		}
		for i, c := range cases {
			_, err := wait(t, tickets[i])
			switch {
			case c.want == nil && err != nil:
				t.Errorf("round %d, %s: %v", round, c.name, err)
			case c.want == errAny && err == nil, c.want != nil && c.want != errAny && !errors.Is(err, c.want):
				t.Errorf("round %d, %s: err = %v, want %v", round, c.name, err, c.want)
			}
		}
	}
	want := []string{"first", "ok 1", "ok 2", "ok 3", "ok 4", "ok 1", "ok 2", "ok 3", "ok 4"}
	if got := Texts(t, mustEvents(t, s, "a", 0, 0)); !slices.Equal(got, want) {
		t.Fatalf("session a holds %v, want %v", got, want)
	}
	if got := Texts(t, mustEvents(t, s, "n", 0, 0)); !slices.Equal(got, []string{"new 1", "new 2", "new 2"}) {
		t.Fatalf("session n holds %v", got)
	}
	checkSeqs(t, s, "a", len(want))
	if _, err := s.GetSession(ctx, "ghost"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("a failed write created its session: %v", err)
	}
	if got, _ := s.GetSession(ctx, "a"); got.Scope != "default" {
		t.Fatalf("a refused create changed the session: %+v", got)
	}
}

// errAny stands for "some error" in a table.
var errAny = errors.New("any error")

// testSubmitMalformed: a malformed write fails at once and queues nothing.
func testSubmitMalformed(t *testing.T, s session.Store) {
	ctx := context.Background()
	create(t, s, "s")
	bad := []session.Write{
		{SessionID: "s", Events: []session.Event{{Type: "", Data: json.RawMessage(`{}`)}}},
		{SessionID: "s", Events: []session.Event{contextEvent("ok"), {Type: session.TypeUserContext, Data: json.RawMessage(`[1]`)}}},
		{SessionID: "s", Events: []session.Event{contextEvent("ok")}, Checkpoint: &session.Checkpoint{State: json.RawMessage(`{"a":`)}},
		{SessionID: "s", Events: []session.Event{contextEvent("ok")}, Checkpoint: &session.Checkpoint{State: nil}},
		{SessionID: "s", Events: []session.Event{contextEvent("ok")}, Checkpoint: &session.Checkpoint{Seq: -1, State: json.RawMessage(`1`)}},
		{SessionID: "s", Events: []session.Event{contextEvent("ok")}, Checkpoint: &session.Checkpoint{State: json.RawMessage("\"\xff\"")}},
		{SessionID: "s", Events: []session.Event{contextEvent("ok")}, Lease: &session.Lease{Owner: ""}},
		{SessionID: "s", Events: []session.Event{contextEvent("ok")}, Lease: &session.Lease{SessionID: "other", Owner: "o", Token: 1}},
		{SessionID: "new", Create: &session.Session{ID: "other"}},
		{SessionID: "new", Create: &session.Session{Scope: "x"}, Lease: &session.Lease{Owner: "o", Token: 1}},
		{SessionID: "", Create: &session.Session{}},
		{SessionID: "new", Create: &session.Session{}, Events: []session.Event{contextEvent("1")}, Checkpoint: &session.Checkpoint{Seq: 2, State: json.RawMessage(`{}`)}},
		{SessionID: "new", Create: &session.Session{}, Checkpoint: &session.Checkpoint{Seq: 1, State: json.RawMessage(`{}`)}},
	}
	for i, w := range bad {
		tk := s.Submit(ctx, w)
		select {
		case <-tk.Done():
		default:
			t.Fatalf("malformed write %d did not fail at once", i)
		}
		if _, err := tk.Wait(ctx); err == nil || errors.Is(err, session.ErrNotFound) {
			t.Errorf("malformed write %d: err = %v, want a validation error", i, err)
		}
	}
	if evs := mustEvents(t, s, "s", 0, 0); len(evs) != 0 {
		t.Fatalf("malformed writes appended %d events", len(evs))
	}
	if _, err := s.GetSession(ctx, "new"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("a malformed write created its session: %v", err)
	}
	// A cancelled context queues nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Submit(cctx, session.Write{SessionID: "s", Events: []session.Event{contextEvent("x")}}).Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Submit with a cancelled context: err = %v", err)
	}
	if _, err := s.Append(cctx, "s", contextEvent("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a cancelled context: err = %v", err)
	}
	if evs := mustEvents(t, s, "s", 0, 0); len(evs) != 0 {
		t.Fatalf("cancelled writes appended %d events", len(evs))
	}
}

// testSubmitCreate: a session created in the transaction of its first
// events, with its checkpoint.
func testSubmitCreate(t *testing.T, s session.Store) {
	ctx := context.Background()
	created := time.Date(2025, 6, 7, 8, 9, 10, 123456789, time.UTC)
	evs := []session.Event{contextEvent("1"), contextEvent("2"), contextEvent("3")}
	evs[1].Time = created.Add(time.Hour)
	got, err := wait(t, s.Submit(ctx, session.Write{
		SessionID:  "new",
		Create:     &session.Session{Scope: "agent", CreatedAt: created},
		Events:     evs,
		Checkpoint: &session.Checkpoint{State: json.RawMessage(`{"turn":1}`)},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Seq != 1 || got[2].Seq != 3 {
		t.Fatalf("create with events returned %+v", got)
	}
	sess, err := s.GetSession(ctx, "new")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Scope != "agent" || !sess.CreatedAt.Equal(created.Truncate(time.Microsecond)) || sess.LastSeq != 3 {
		t.Fatalf("GetSession = %+v", sess)
	}
	if !sess.UpdatedAt.Equal(got[2].Time) { // the events stamped now are the latest
		t.Fatalf("UpdatedAt %v is not the latest event time %v", sess.UpdatedAt, got[2].Time)
	}
	cp, err := s.LoadCheckpoint(ctx, "new")
	if err != nil || cp.Seq != 3 || string(cp.State) != `{"turn":1}` {
		t.Fatalf("checkpoint of a created session = %+v, %v; want seq 3", cp, err)
	}
	checkSeqs(t, s, "new", 3)

	// CreateSession after a write created the id: ErrExists.
	if err := s.CreateSession(ctx, session.Session{ID: "new"}); !errors.Is(err, session.ErrExists) {
		t.Fatalf("CreateSession of a taken id: %v", err)
	}
	// A create alone; then appends submitted before it resolves.
	t1 := s.Submit(ctx, session.Write{SessionID: "bare", Create: &session.Session{}})
	t2 := s.Submit(ctx, session.Write{SessionID: "bare", Events: []session.Event{contextEvent("after")}})
	if _, err := wait(t, t1); err != nil {
		t.Fatal(err)
	}
	if got, err := wait(t, t2); err != nil || got[0].Seq != 1 {
		t.Fatalf("append after a queued create = %+v, %v", got, err)
	}
	if sess, _ := s.GetSession(ctx, "bare"); sess.CreatedAt.IsZero() || sess.Scope != "" || sess.LastSeq != 1 {
		t.Fatalf("bare session %+v", sess)
	}
}

// testSessionHeader: LastSeq and UpdatedAt follow the log.
func testSessionHeader(t *testing.T, s session.Store) {
	ctx := context.Background()
	created := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	if err := s.CreateSession(ctx, session.Session{ID: "h", CreatedAt: created, LastSeq: 50, UpdatedAt: created.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	sess, _ := s.GetSession(ctx, "h")
	if sess.LastSeq != 0 || !sess.UpdatedAt.Equal(created) {
		t.Fatalf("new session %+v: want LastSeq 0 and UpdatedAt = CreatedAt (given values ignored)", sess)
	}
	old := contextEvent("old")
	old.Time = created.Add(-24 * time.Hour)
	mustAppend(t, s, "h", old)
	if sess, _ = s.GetSession(ctx, "h"); sess.LastSeq != 1 || !sess.UpdatedAt.Equal(created) {
		t.Fatalf("after an event older than the session: %+v, want UpdatedAt = CreatedAt", sess)
	}
	got := mustAppend(t, s, "h", contextEvent("now"), contextEvent("now too"))
	if sess, _ = s.GetSession(ctx, "h"); sess.LastSeq != 3 || !sess.UpdatedAt.Equal(got[1].Time) {
		t.Fatalf("after two events: %+v, want LastSeq 3, UpdatedAt %v", sess, got[1].Time)
	}
	// In one burst, the last event of the last write sets it.
	later, earlier := contextEvent("later"), contextEvent("earlier")
	later.Time, earlier.Time = got[1].Time.Add(time.Hour), got[1].Time.Add(time.Minute)
	t1 := s.Submit(ctx, session.Write{SessionID: "h", Events: []session.Event{later}})
	t2 := s.Submit(ctx, session.Write{SessionID: "h", Events: []session.Event{earlier}})
	for _, tk := range []*session.Ticket{t1, t2} {
		if _, err := wait(t, tk); err != nil {
			t.Fatal(err)
		}
	}
	if sess, _ = s.GetSession(ctx, "h"); sess.LastSeq != 5 || !sess.UpdatedAt.Equal(earlier.Time) {
		t.Fatalf("after a burst: %+v, want UpdatedAt %v (the last event's)", sess, earlier.Time)
	}
	// Writes without events leave it, alone or in a burst.
	for _, n := range []int{1, 3} {
		var tickets []*session.Ticket
		for i := 0; i < n; i++ {
			tickets = append(tickets, s.Submit(ctx, session.Write{SessionID: "h", Checkpoint: &session.Checkpoint{Seq: 5, State: json.RawMessage(`5`)}}))
		}
		for _, tk := range tickets {
			if _, err := wait(t, tk); err != nil {
				t.Fatal(err)
			}
		}
		if sess, _ = s.GetSession(ctx, "h"); !sess.UpdatedAt.Equal(earlier.Time) {
			t.Fatalf("after %d writes without events: UpdatedAt %v, want %v", n, sess.UpdatedAt, earlier.Time)
		}
	}
}

func wait(t *testing.T, tk *session.Ticket) ([]session.Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	got, err := tk.Wait(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("a ticket did not resolve")
	}
	return got, err
}
