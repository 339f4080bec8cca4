package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/session"
)

// A run that may suspend (runtime.RunOptions.Hold) logs what a later
// execution needs to replay it: each sub-call's start carries the piece of
// the program's journal recorded before it (sandbox.Replayer), and each
// settlement what the program received. When a sub-call's ask goes
// unanswered for the hold, its result is SUSPENDED: the run stops its
// program, lets its other calls finish, logs tool/code-suspended (the calls
// whose asks it waits for, and the rest of the journal) and ends with
// SUSPENDED. Resumed (runtime.RunOptions.Resume), the program runs again
// from its start: the calls it makes are matched in submission order against
// the logged ones and answered with their logged settlements, the calls that
// waited run now (their asks answered in the log), and past the log the run
// goes on live. No tool body runs twice.

// SuspendSink is an EventSink that can log a run's suspension; a run
// suspends only into one. Suspended returns once the event is durable.
type SuspendSink interface {
	EventSink
	Suspended(ctx context.Context, ev session.CodeSuspended) error
}

// canSuspend reports whether sink logs suspensions: it is a SuspendSink, or
// a Tee of at least one.
func canSuspend(sink EventSink) bool {
	if t, ok := sink.(tee); ok {
		for _, s := range t {
			if canSuspend(s) {
				return true
			}
		}
		return false
	}
	_, ok := sink.(SuspendSink)
	return ok
}

// Resume is what a suspended run left in the log, for its next execution:
// the caller of a resumed run_code call passes it as
// runtime.RunOptions.Resume.
type Resume struct {
	// Journal is the program's journal: the pieces of the run's starts and
	// suspensions, in log order.
	Journal string
	// Starts are the logged sub-call starts, Starts[n-1] sub-call n.
	Starts []session.CodeDispatchStart
	// Settled are the logged settlements by sub-call number.
	Settled map[int]session.CodeDispatch
	// Waiting are the sub-calls (ids) whose asks the run waited for: they
	// run now, their asks answered.
	Waiting map[string]bool
	// Suspended reports that the run suspended (the log has
	// tool/code-suspended for it).
	Suspended bool
}

// called reports whether the logged execution called the tool: a resumed
// program still finds a tool removed since, and its logged calls replay.
func (rs *Resume) called(name string) bool {
	for _, s := range rs.Starts {
		if s.Name == name {
			return true
		}
	}
	return false
}

// ResumeOf folds a run_code call's nested events (in log order) into its
// Resume.
func ResumeOf(callID string, events []session.Event) (*Resume, error) {
	res := &Resume{Settled: map[int]session.CodeDispatch{}, Waiting: map[string]bool{}}
	var journal strings.Builder
	for _, e := range events {
		switch e.Type {
		case session.TypeCodeDispatchStart:
			var p session.CodeDispatchStart
			if err := e.Decode(&p); err != nil || p.ParentCallID != callID {
				continue
			}
			if p.Number != len(res.Starts)+1 {
				return nil, fmt.Errorf("sub-call %d is logged where %d was expected", p.Number, len(res.Starts)+1)
			}
			res.Starts = append(res.Starts, p)
			journal.WriteString(p.Journal)
		case session.TypeCodeDispatch:
			var p session.CodeDispatch
			if err := e.Decode(&p); err != nil || p.ParentCallID != callID {
				continue
			}
			res.Settled[p.Number] = p
		case session.TypeCodeSuspended:
			var p session.CodeSuspended
			if err := e.Decode(&p); err != nil || p.CallID != callID {
				continue
			}
			journal.WriteString(p.Journal)
			res.Suspended = true
			for _, id := range p.Waiting {
				res.Waiting[id] = true
			}
		}
	}
	res.Journal = journal.String()
	return res, nil
}

// journalPieces gathers the program's journal pieces, in the order the
// program handed them out, until they are logged.
type journalPieces struct {
	mu   sync.Mutex
	text strings.Builder
	over bool // a piece ended the journal as over its bound: it cannot replay
}

func (j *journalPieces) add(piece string) {
	if piece == "" {
		return
	}
	j.mu.Lock()
	j.text.WriteString(piece)
	j.over = j.over || strings.HasSuffix(piece, " X")
	j.mu.Unlock()
}

// whole reports whether the journal can replay: it never outgrew its bound.
func (j *journalPieces) whole() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return !j.over
}

// take returns the pieces gathered since the last take.
func (j *journalPieces) take() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.text.String()
	j.text.Reset()
	return s
}

// resumableRun is a run that may suspend: its program keeps a journal.
type resumableRun struct{ *run }

// Journal implements sandbox.Replayer: the journal of the execution the run
// resumes; "" runs live.
func (r resumableRun) Journal() string {
	if r.resume == nil {
		return ""
	}
	return r.resume.Journal
}

var _ sandbox.Replayer = resumableRun{}

// resumable reports whether the run logs what replaying it needs.
func (r *run) resumable() bool { return r.hold > 0 }

// replay answers sub-call num from the log when the run resumes and the log
// has it: settled, with its settlement (replayed); started and waiting for
// its ask, by handing back its logged start for the call to run now. A call
// that differs from the logged one ends the run as diverged (replayed). The
// run's mu is held.
func (r *run) replay(num int, c sandbox.Call, sc *subCall, settle func(sandbox.Settlement)) (logged *session.CodeDispatchStart, replayed bool) {
	if r.resume == nil || num > len(r.resume.Starts) {
		return nil, false
	}
	start := &r.resume.Starts[num-1]
	if diff := callDifference(start, c); diff != "" {
		r.diverge(fmt.Sprintf("call %d: %s", num, diff))
		settle(sandbox.Settlement{Err: &sandbox.CallError{ToolName: c.Name, Code: string(registry.CodeReplayDiverged), Message: diff}})
		return nil, true
	}
	d, ok := r.resume.Settled[num]
	if !ok {
		if r.resume.Waiting[start.SubCallID] || r.safeToRepeat(c.Name) {
			return start, false // it runs now (again, with the same idempotency key)
		}
		// Started and never settled, and no ask held it: the process that ran it
		// stopped while it ran, and whether its effect happened is unknown.
		d = session.CodeDispatch{CodeDispatchStart: *start, IsError: true, Thrown: &session.Thrown{
			Tool: c.Name, Code: string(registry.CodeAborted), Message: "interrupted: the process stopped while this call ran; whether it took effect is unknown",
		}}
	}
	sc.started, sc.done = true, true
	sc.keep(c.Name, d.Contexts, registry.Images(d.Content), d.ConcludesTurn)
	if d.Thrown != nil {
		settle(sandbox.Settlement{Err: &sandbox.CallError{ToolName: d.Thrown.Tool, Code: d.Thrown.Code, Message: d.Thrown.Message}})
	} else {
		settle(sandbox.Settlement{Value: d.Value})
	}
	return nil, true
}

// safeToRepeat reports whether a call of the tool may run again when
// whether it ran is unknown: it changes nothing, or says it is idempotent.
func (r *run) safeToRepeat(name string) bool {
	t, ok := r.view.Get(name)
	if !ok {
		return false
	}
	h := t.Hints()
	return h.ReadOnly || h.Idempotent != nil && *h.Idempotent
}

// callDifference says how c differs from the logged start; "" when it is
// the same call (name and canonical arguments).
func callDifference(start *session.CodeDispatchStart, c sandbox.Call) string {
	if start.Name != c.Name {
		return fmt.Sprintf("the program called %s where the log has %s", c.Name, start.Name)
	}
	if !sameJSON(start.Arguments, c.Args) {
		return fmt.Sprintf("the program called %s with %s where the log has %s", c.Name, clip(c.Args), clip(start.Arguments))
	}
	return ""
}

// sameJSON reports whether a and b are the same JSON value, whatever their
// spacing and the order of object members; numbers compare as written, so
// no two integers beyond 2^53 pass for one.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ca, okA := canonical(a)
	cb, okB := canonical(b)
	return okA && okB && bytes.Equal(ca, cb)
}

// canonical is JSON text with object members sorted and numbers kept as
// written.
func canonical(b []byte) ([]byte, bool) {
	v, err := frozen.Parse(b)
	if err != nil {
		return nil, false
	}
	tree, err := v.Decode() // json.Number keeps each number's text
	if err != nil {
		return nil, false
	}
	out, err := json.Marshal(tree) // map keys come out sorted
	return out, err == nil
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// recordSettlement adds to a settlement event what replaying the program
// needs: what it received, and what the run's result carries of the call.
func recordSettlement(ev *session.CodeDispatch, s sandbox.Settlement, res *runtime.Result) {
	if s.Err != nil {
		ev.Thrown = &session.Thrown{Tool: s.Err.ToolName, Code: s.Err.Code, Message: s.Err.Message}
	} else if len(s.Value) > 0 {
		ev.Value = json.RawMessage(s.Value)
	}
	ev.Contexts = res.Contexts()
	ev.ConcludesTurn = res.ConcludesTurn()
}

// suspendAt records that sub-call sc waits for its ask beyond the hold, and
// stops the program: the run suspends.
func (r *run) suspendAt(sc *subCall) {
	r.stopMu.Lock()
	r.waiting = append(r.waiting, sc.start.SubCallID)
	r.stopMu.Unlock()
	r.stopProgram(errSuspending)
}

// diverge ends the run: the program did otherwise than the log says.
func (r *run) diverge(what string) {
	r.stopMu.Lock()
	if r.divergence == "" {
		r.divergence = what
	}
	r.stopMu.Unlock()
	r.stopProgram(errDiverged)
}

// stopping reports whether the program is being stopped to suspend or for
// diverging: no more calls are dispatched.
func (r *run) stopping() bool {
	if r.programCtx.Err() == nil {
		return false
	}
	cause := context.Cause(r.programCtx)
	return cause == errSuspending || cause == errDiverged
}

var (
	errSuspending = fmt.Errorf("the run suspends: a call waits for approval")
	errDiverged   = fmt.Errorf("the resumed program did otherwise than the log says")
)

// suspension ends a run that suspends: its other calls finish, the
// suspension is logged with the rest of the journal, and the run ends with
// SUSPENDED. When the run cannot suspend (its journal is not whole, or the
// log fails), it fails instead.
func (r *run) suspension(res sandbox.Result) error {
	r.batch.Drain() // the calls in flight settle (logged); the queued are abandoned
	r.abort(nil)
	r.stopMu.Lock()
	waiting := append([]string(nil), r.waiting...)
	r.stopMu.Unlock()
	r.journal.add(res.Journal)
	journal := r.journal.take()
	ss, ok := r.sink.(SuspendSink)
	switch {
	case res.Abandoned || !r.journal.whole():
		return &registry.Error{Code: registry.CodeCodeRunFailed, Kind: sandbox.KindCancelled, Message: "run_code could not suspend (its program could not be recorded whole) while calls waited for approval"}
	case !ok:
		return &registry.Error{Code: registry.CodeCodeRunFailed, Kind: sandbox.KindCancelled, Message: "run_code could not suspend: nothing logs it"}
	}
	if err := ss.Suspended(r.logCtx, session.CodeSuspended{CallID: r.exec.CallID(), Waiting: waiting, Journal: journal}); err != nil {
		return &registry.Error{Code: registry.CodeCodeRunFailed, Kind: sandbox.KindCancelled, Message: "run_code could not suspend: the log failed: " + err.Error()}
	}
	return &registry.Error{Code: registry.CodeSuspended, Message: fmt.Sprintf("run_code suspended: %d call(s) wait for approval; the run resumes once they are answered", len(waiting))}
}

// diverged says how the resumed program diverged from the log (the host saw
// another call, or the program another clock, timer or result); "" when it
// did not.
func (r *run) diverged(res sandbox.Result) string {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	switch {
	case r.divergence != "":
		return r.divergence
	case res.Err != nil && res.Err.Kind == sandbox.KindDiverged:
		return res.Err.Message
	}
	return ""
}
