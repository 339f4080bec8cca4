package agent

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
)

// submitCounter counts the writes a log writer submits.
type submitCounter struct {
	session.Store
	n atomic.Int32
}

func (s *submitCounter) Submit(ctx context.Context, w session.Write) *session.Ticket {
	s.n.Add(1)
	return s.Store.Submit(ctx, w)
}

// lingerSetup is a log writer on session "s" of a memory store that counts
// its writes, and an event to hold.
func lingerSetup(t *testing.T) (*submitCounter, *logWriter, session.Event) {
	t.Helper()
	mem := session.NewMemory()
	t.Cleanup(func() { mem.Close() })
	if err := mem.CreateSession(context.Background(), session.Session{ID: "s", Scope: "default"}); err != nil {
		t.Fatal(err)
	}
	store := &submitCounter{Store: mem}
	ev, err := session.NewEvent(session.TypeToolNotice, session.ToolNotice{CallID: "c", Message: "m"})
	if err != nil {
		t.Fatal(err)
	}
	return store, newLogWriter(store, "s", nil, nil, nil), ev
}

// A lingering event waits lingerFor from when it was held, not from the
// newest one: a program whose calls keep coming has its events written
// within lingerFor of each call, not only at its end.
func TestLingerCountsFromTheOldestEvent(t *testing.T) {
	store, w, ev := lingerSetup(t)
	// An event every 20 µs or so (a sleep could oversleep lingerFor), for ten
	// times lingerFor.
	for deadline, next := time.Now().Add(10*lingerFor), time.Now(); time.Now().Before(deadline); {
		if now := time.Now(); now.After(next) {
			w.holdLinger(ev)
			next = now.Add(20 * time.Microsecond)
		}
	}
	if store.n.Load() == 0 {
		t.Fatalf("no write while events kept coming for %v: each one put the flush off", 10*lingerFor)
	}
	// A write takes what lingers with it, and its pending flush with it.
	w.holdLinger(ev)
	before := store.n.Load()
	w.submit(context.Background())
	time.Sleep(3 * lingerFor)
	if got := store.n.Load(); got != before+1 {
		t.Fatalf("%d writes after the submit that took the lingering event, want 1", got-before)
	}
	if err := w.durable(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// An event that lingers alone is written within lingerFor, not before the
// lingerer's due time, and the lingerer stops once nothing lingers.
func TestLingeringEventIsWrittenAlone(t *testing.T) {
	store, w, ev := lingerSetup(t)
	held := time.Now()
	w.holdLinger(ev)
	for store.n.Load() == 0 {
		if time.Since(held) > time.Second {
			t.Fatal("a lingering event was not written")
		}
		time.Sleep(100 * time.Microsecond)
	}
	if waited := time.Since(held); waited < lingerFor-lingerTick {
		t.Errorf("written after %v, before its due time of %v", waited, lingerFor-lingerTick)
	}
	if err := w.durable(context.Background()); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Second); ; time.Sleep(lingerTick) {
		lingers.mu.Lock()
		running := lingers.running
		lingers.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lingerer still ticks with nothing lingering")
		}
	}
}
