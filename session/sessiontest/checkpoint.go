package sessiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/codemode/codemode/session"
)

// testCheckpoints: saving with events and alone, what Seq 0 means, refusing
// a checkpoint past the log, keeping the newest, and a bounded resume.
func testCheckpoints(t *testing.T, s session.Store) {
	ctx := context.Background()
	if _, err := s.LoadCheckpoint(ctx, "ghost"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("LoadCheckpoint(unknown): err = %v, want ErrNotFound", err)
	}
	create(t, s, "s")
	if cp, err := s.LoadCheckpoint(ctx, "s"); err != nil || cp.Seq != 0 || cp.State != nil {
		t.Fatalf("LoadCheckpoint of a session without one = %+v, %v; want zero", cp, err)
	}
	save := func(w session.Write) error {
		t.Helper()
		w.SessionID = "s"
		_, err := wait(t, s.Submit(ctx, w))
		return err
	}
	load := func() session.Checkpoint {
		t.Helper()
		cp, err := s.LoadCheckpoint(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}

	// Alone, before any event: seq 0 covers nothing.
	if err := save(session.Write{Checkpoint: &session.Checkpoint{State: json.RawMessage(`{"n":0}`)}}); err != nil {
		t.Fatal(err)
	}
	if cp := load(); cp.Seq != 0 || string(cp.State) != `{"n":0}` {
		t.Fatalf("checkpoint = %+v", cp)
	}
	// With events, seq 0 is the write's last event; the state is verbatim.
	state := ` { "turn": 2, "big": 123456789012345678901234567890, "z": -0, "s": "é🌍\u2028" } `
	if err := save(session.Write{Events: []session.Event{contextEvent("1"), contextEvent("2")}, Checkpoint: &session.Checkpoint{State: json.RawMessage(state)}}); err != nil {
		t.Fatal(err)
	}
	if cp := load(); cp.Seq != 2 || string(cp.State) != `{ "turn": 2, "big": 123456789012345678901234567890, "z": -0, "s": "é🌍\u2028" }` {
		t.Fatalf("checkpoint = %+v", cp)
	}
	// Alone, an explicit seq within the log; one past it is refused. With
	// events, a seq names a state before them, so it can be at most the
	// last seq before them (theirs are the store's): one past it fails the
	// write whole.
	mustAppend(t, s, "s", contextEvent("3"))
	if err := save(session.Write{Checkpoint: &session.Checkpoint{Seq: 3, State: json.RawMessage(`3`)}}); err != nil {
		t.Fatal(err)
	}
	if err := save(session.Write{Checkpoint: &session.Checkpoint{Seq: 4, State: json.RawMessage(`4`)}}); err == nil {
		t.Fatal("a checkpoint past the log was saved")
	}
	if err := save(session.Write{Events: []session.Event{contextEvent("lost")}, Checkpoint: &session.Checkpoint{Seq: 4, State: json.RawMessage(`4`)}}); err == nil {
		t.Fatal("a write with events and a checkpoint past the log before them was made")
	}
	if cp := load(); cp.Seq != 3 || string(cp.State) != `3` {
		t.Fatalf("after refused checkpoints: %+v", cp)
	}
	checkSeqs(t, s, "s", 3)
	// An older checkpoint is ignored; one for the same seq replaces it.
	if err := save(session.Write{Checkpoint: &session.Checkpoint{Seq: 1, State: json.RawMessage(`"old"`)}}); err != nil {
		t.Fatal(err)
	}
	if cp := load(); cp.Seq != 3 || string(cp.State) != `3` {
		t.Fatalf("an older checkpoint replaced a newer one: %+v", cp)
	}
	if err := save(session.Write{Checkpoint: &session.Checkpoint{Seq: 3, State: json.RawMessage(`[3]`)}}); err != nil {
		t.Fatal(err)
	}
	if cp := load(); cp.Seq != 3 || string(cp.State) != `[3]` {
		t.Fatalf("same-seq checkpoint: %+v", cp)
	}
	// Checkpoints of one burst: the newest wins whatever the order.
	t1 := s.Submit(ctx, session.Write{SessionID: "s", Events: []session.Event{contextEvent("4")}, Checkpoint: &session.Checkpoint{State: json.RawMessage(`4`)}})
	t2 := s.Submit(ctx, session.Write{SessionID: "s", Checkpoint: &session.Checkpoint{Seq: 2, State: json.RawMessage(`"stale"`)}})
	for _, tk := range []*session.Ticket{t1, t2} {
		if _, err := wait(t, tk); err != nil {
			t.Fatal(err)
		}
	}
	if cp := load(); cp.Seq != 4 || string(cp.State) != `4` {
		t.Fatalf("after a burst: %+v", cp)
	}

	// With events, a checkpoint of the state before them (its writer's, as
	// of the log it read) is saved with them, in the same write, and an
	// older one still does nothing.
	if err := save(session.Write{Events: []session.Event{contextEvent("5"), contextEvent("6")}, Checkpoint: &session.Checkpoint{Seq: 4, State: json.RawMessage(`[4]`)}}); err != nil {
		t.Fatal(err)
	}
	if cp := load(); cp.Seq != 4 || string(cp.State) != `[4]` {
		t.Fatalf("a checkpoint before a write's events: %+v", cp)
	}
	checkSeqs(t, s, "s", 6)
	if err := save(session.Write{Events: []session.Event{contextEvent("7")}, Checkpoint: &session.Checkpoint{Seq: 2, State: json.RawMessage(`"stale"`)}}); err != nil {
		t.Fatal(err)
	}
	if cp := load(); cp.Seq != 4 || string(cp.State) != `[4]` {
		t.Fatalf("an older checkpoint with events replaced a newer one: %+v", cp)
	}
	if err := save(session.Write{Events: []session.Event{contextEvent("lost")}, Checkpoint: &session.Checkpoint{Seq: 8, State: json.RawMessage(`8`)}}); err == nil {
		t.Fatal("a write whose checkpoint names its own first event was made")
	}
	checkSeqs(t, s, "s", 7)

	// Resume: the checkpoint and the events after it, however long the log.
	for i := 8; i <= 60; i++ {
		w := session.Write{SessionID: "s", Events: []session.Event{contextEvent(fmt.Sprint(i))}}
		if i%10 == 0 {
			w.Checkpoint = &session.Checkpoint{State: json.RawMessage(fmt.Sprint(i))}
		}
		s.Submit(ctx, w)
	}
	if _, err := wait(t, s.Submit(ctx, session.Write{SessionID: "s", Events: []session.Event{contextEvent("61")}})); err != nil {
		t.Fatal(err)
	}
	cp := load()
	tail := mustEvents(t, s, "s", cp.Seq, 0)
	if cp.Seq != 60 || string(cp.State) != `60` || len(tail) != 1 || tail[0].Seq != 61 {
		t.Fatalf("resume from %+v reads %d events", cp, len(tail))
	}
	// The returned state is the caller's to keep.
	cp.State[0] = 'X'
	if again := load(); string(again.State) != `60` {
		t.Fatalf("LoadCheckpoint returned the store's own memory: %s", again.State)
	}
}
