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
	c := checkpointLog{t: t, s: s}
	checkpointSeqs(c)
	checkpointNewest(c)
	checkpointBeforeEvents(c)
	checkpointResume(c)
}

// checkpointLog saves and loads the checkpoints of session "s".
type checkpointLog struct {
	t *testing.T
	s session.Store
}

func (c checkpointLog) save(w session.Write) error {
	c.t.Helper()
	w.SessionID = "s"
	_, err := wait(c.t, c.s.Submit(context.Background(), w))
	return err
}

func (c checkpointLog) mustSave(w session.Write) {
	c.t.Helper()
	if err := c.save(w); err != nil {
		c.t.Fatal(err)
	}
}

func (c checkpointLog) load() session.Checkpoint {
	c.t.Helper()
	cp, err := c.s.LoadCheckpoint(context.Background(), "s")
	if err != nil {
		c.t.Fatal(err)
	}
	return cp
}

// expect fails the test unless the saved checkpoint is (seq, state).
func (c checkpointLog) expect(seq int64, state, what string) {
	c.t.Helper()
	if cp := c.load(); cp.Seq != seq || string(cp.State) != state {
		c.t.Fatalf("%s: %+v", what, cp)
	}
}

// checkpointSeqs: what seq 0 means alone and with events, explicit seqs
// within the log, and those past it refused.
func checkpointSeqs(c checkpointLog) {
	t, s := c.t, c.s
	// Alone, before any event: seq 0 covers nothing.
	c.mustSave(session.Write{Checkpoint: &session.Checkpoint{State: json.RawMessage(`{"n":0}`)}})
	c.expect(0, `{"n":0}`, "checkpoint")
	// With events, seq 0 is the write's last event; the state is verbatim.
	state := ` { "turn": 2, "big": 123456789012345678901234567890, "z": -0, "s": "é🌍\u2028" } `
	c.mustSave(session.Write{Events: []session.Event{contextEvent("1"), contextEvent("2")}, Checkpoint: &session.Checkpoint{State: json.RawMessage(state)}})
	c.expect(2, `{ "turn": 2, "big": 123456789012345678901234567890, "z": -0, "s": "é🌍\u2028" }`, "checkpoint")
	// Alone, an explicit seq within the log; one past it is refused. With
	// events, a seq names a state before them, so it can be at most the
	// last seq before them (theirs are the store's): one past it fails the
	// write whole.
	mustAppend(t, s, "s", contextEvent("3"))
	c.mustSave(session.Write{Checkpoint: &session.Checkpoint{Seq: 3, State: json.RawMessage(`3`)}})
	if err := c.save(session.Write{Checkpoint: &session.Checkpoint{Seq: 4, State: json.RawMessage(`4`)}}); err == nil {
		t.Fatal("a checkpoint past the log was saved")
	}
	if err := c.save(session.Write{Events: []session.Event{contextEvent("lost")}, Checkpoint: &session.Checkpoint{Seq: 4, State: json.RawMessage(`4`)}}); err == nil {
		t.Fatal("a write with events and a checkpoint past the log before them was made")
	}
	c.expect(3, `3`, "after refused checkpoints")
	checkSeqs(t, s, "s", 3)
}

// checkpointNewest: an older checkpoint is ignored, one for the same seq
// replaces it, and of one burst the newest wins whatever the order.
func checkpointNewest(c checkpointLog) {
	ctx, t, s := context.Background(), c.t, c.s
	c.mustSave(session.Write{Checkpoint: &session.Checkpoint{Seq: 1, State: json.RawMessage(`"old"`)}})
	c.expect(3, `3`, "an older checkpoint replaced a newer one")
	c.mustSave(session.Write{Checkpoint: &session.Checkpoint{Seq: 3, State: json.RawMessage(`[3]`)}})
	c.expect(3, `[3]`, "same-seq checkpoint")
	t1 := s.Submit(ctx, session.Write{SessionID: "s", Events: []session.Event{contextEvent("4")}, Checkpoint: &session.Checkpoint{State: json.RawMessage(`4`)}})
	t2 := s.Submit(ctx, session.Write{SessionID: "s", Checkpoint: &session.Checkpoint{Seq: 2, State: json.RawMessage(`"stale"`)}})
	for _, tk := range []*session.Ticket{t1, t2} {
		if _, err := wait(t, tk); err != nil {
			t.Fatal(err)
		}
	}
	c.expect(4, `4`, "after a burst")
}

// checkpointBeforeEvents: with events, a checkpoint of the state before
// them (its writer's, as of the log it read) is saved with them, in the same
// write, and an older one still does nothing.
func checkpointBeforeEvents(c checkpointLog) {
	t, s := c.t, c.s
	c.mustSave(session.Write{Events: []session.Event{contextEvent("5"), contextEvent("6")}, Checkpoint: &session.Checkpoint{Seq: 4, State: json.RawMessage(`[4]`)}})
	c.expect(4, `[4]`, "a checkpoint before a write's events")
	checkSeqs(t, s, "s", 6)
	c.mustSave(session.Write{Events: []session.Event{contextEvent("7")}, Checkpoint: &session.Checkpoint{Seq: 2, State: json.RawMessage(`"stale"`)}})
	c.expect(4, `[4]`, "an older checkpoint with events replaced a newer one")
	if err := c.save(session.Write{Events: []session.Event{contextEvent("lost")}, Checkpoint: &session.Checkpoint{Seq: 8, State: json.RawMessage(`8`)}}); err == nil {
		t.Fatal("a write whose checkpoint names its own first event was made")
	}
	checkSeqs(t, s, "s", 7)
}

// checkpointResume: the checkpoint and the events after it, however long
// the log; the returned state is the caller's to keep.
func checkpointResume(c checkpointLog) {
	ctx, t, s := context.Background(), c.t, c.s
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
	cp := c.load()
	tail := mustEvents(t, s, "s", cp.Seq, 0)
	if cp.Seq != 60 || string(cp.State) != `60` || len(tail) != 1 || tail[0].Seq != 61 {
		t.Fatalf("resume from %+v reads %d events", cp, len(tail))
	}
	cp.State[0] = 'X'
	if again := c.load(); string(again.State) != `60` {
		t.Fatalf("LoadCheckpoint returned the store's own memory: %s", again.State)
	}
}
