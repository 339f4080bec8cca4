package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/codemode/codemode/session"
)

// logWriter orders one session's writes during a step and gates what leaves
// the process on their durability. Writes reach the store in the order the
// step makes them, through its group commit; a write is held back while
// nothing depends on it (the step's opening contexts, the tool/call of a
// call without effects) and goes out with the next one, so a step costs as
// few transactions as it needs. Nothing that depends on the log is shown
// before durable has returned: the step's results, an approval's ask.
type logWriter struct {
	store     session.Store
	sessionID string

	mu      sync.Mutex
	create  *session.Session    // created by the first write; guarded by mu
	cp      *session.Checkpoint // saved by the first write: the state before it; guarded by mu
	lease   *session.Lease      // fences every write; guarded by mu
	held    []session.Event     // to go with the next write; guarded by mu
	tickets []*session.Ticket   // submitted, in order; guarded by mu
	failure error               // the first failed write; guarded by mu
	armed   bool                // the lingerer holds a flush for the oldest lingering event; guarded by mu
	gen     uint64              // counts armings, so that a flush meant for an earlier one is dropped; guarded by mu
}

// lingerFor is how long a lingering event waits for a write to go with: a
// run's nested events join its result's commit when the run is that short,
// and reach live streams within that time when it is not. (Shorter, a
// program of many quick calls paid a second flush on its critical path: its
// result's commit queued behind its events'; BENCHMARKS.md, "Figures behind the code's choices".)
const lingerFor = 5 * time.Millisecond

func newLogWriter(store session.Store, sessionID string, create *session.Session, lease *session.Lease, cp *session.Checkpoint) *logWriter {
	return &logWriter{store: store, sessionID: sessionID, create: create, lease: lease, cp: cp}
}

// hold queues events for the next write.
func (w *logWriter) hold(events ...session.Event) {
	w.mu.Lock()
	w.held = append(w.held, events...)
	w.mu.Unlock()
}

// holdLinger queues events for the next write, or for a write of their own
// lingerFor after the oldest of them when no other write comes first:
// nothing waits for them, but they must not wait for the end of a long run
// either, however often more arrive.
func (w *logWriter) holdLinger(events ...session.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held = append(w.held, events...)
	if w.armed {
		return
	}
	w.armed = true
	w.gen++
	lingers.add(w, w.gen)
}

// flushLingering submits the held events, if the lingerer's flush of arming
// gen is still due: no write has taken them since.
func (w *logWriter) flushLingering(gen uint64) {
	w.mu.Lock()
	due := w.armed && w.gen == gen
	w.mu.Unlock()
	if due {
		w.submit(context.Background())
	}
}

// submit sends the held events and these as one write and returns its
// ticket without waiting. The write keeps its place in the session's order
// whatever becomes of ctx.
func (w *logWriter) submit(ctx context.Context, events ...session.Event) *session.Ticket {
	w.mu.Lock()
	defer w.mu.Unlock()
	all := append(w.held, events...)
	w.held = nil
	w.armed = false // what lingered goes now
	if len(all) == 0 && w.create == nil && w.cp == nil {
		t, resolve := session.NewTicket()
		resolve(nil, nil)
		return t
	}
	t := w.store.Submit(context.WithoutCancel(ctx), session.Write{SessionID: w.sessionID, Create: w.create, Events: all, Checkpoint: w.cp, Lease: w.lease})
	w.create, w.cp = nil, nil
	w.tickets = append(w.tickets, t)
	return t
}

// commit is submit, then durable: it returns the write's events once every
// write of the step so far is durable.
func (w *logWriter) commit(ctx context.Context, events ...session.Event) ([]session.Event, error) {
	t := w.submit(ctx, events...)
	if err := w.durable(ctx); err != nil {
		return nil, err
	}
	return t.Wait(ctx)
}

// durable waits until every write submitted so far is durable and returns
// the first that failed (writes fail alone: a later one may have committed).
// Held events are not written: a caller that needs them durable submits
// first. ctx bounds only the waiting.
func (w *logWriter) durable(ctx context.Context) error {
	w.mu.Lock()
	tickets := w.tickets
	w.mu.Unlock()
	for _, t := range tickets {
		if _, err := t.Wait(ctx); err != nil {
			w.mu.Lock()
			if w.failure == nil && !errors.Is(err, ctx.Err()) {
				w.failure = err
			}
			w.mu.Unlock()
			return fmt.Errorf("agent: append to session %q: %w", w.sessionID, err)
		}
	}
	return nil
}

// written returns the events of every resolved write so far, in order, and
// whether every write succeeded.
func (w *logWriter) written() ([]session.Event, bool) {
	w.mu.Lock()
	tickets := w.tickets
	w.mu.Unlock()
	var out []session.Event
	for _, t := range tickets {
		select {
		case <-t.Done():
		default:
			return out, false
		}
		events, err := t.Wait(context.Background())
		if err != nil {
			return out, false
		}
		out = append(out, events...)
	}
	return out, true
}

// entriesEvents builds events from entries, naming what they log in errors.
func entriesEvents(what string, entries ...entry) ([]session.Event, error) {
	events := make([]session.Event, len(entries))
	for i, en := range entries {
		e, err := session.NewEvent(en.typ, en.payload)
		if err != nil {
			return nil, fmt.Errorf("agent: log %s: %w", what, err)
		}
		events[i] = e
	}
	return events, nil
}
