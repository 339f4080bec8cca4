package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/internal/gopool"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/session"
)

// A run_code call that suspended (its program waited on an ask longer than
// Options.Hold) stays open in the log with tool/code-suspended. Once every
// ask it waits for is answered, in any process, Resume runs it again, by
// replay, under the session's lock and lease: the program starts over in a
// fresh VM, the calls the log has settled are answered from the log, the
// calls that waited run now, and past the log it goes on live; its
// tool/result ends the call as any run's. Answer resumes a run when it
// answers its last pending ask; ResumeWaiting (at start and periodically)
// resumes the runs whose answering process stopped first, and ends asks
// older than Options.ApprovalTimeout with decision "timeout", which the
// resumed program sees as the call's denial.

// ErrWaiting: the run still waits for an unanswered ask.
var ErrWaiting = errors.New("agent: the run still waits for approval")

// ErrNotSuspended: the call is not a suspended run (it never suspended, or
// it has its result already).
var ErrNotSuspended = errors.New("agent: no suspended run")

// Resume resumes the suspended run callID of the session by replay, once
// none of its asks is pending, and returns its result once that is durable
// (a result with code SUSPENDED when it suspended again). It fails with
// ErrNotSuspended when the call is not a suspended run, ErrWaiting while an
// ask it waits for is unanswered, and session.ErrNotFound for an unknown
// session.
func (a *Agent) Resume(ctx context.Context, sessionID, callID string) (*runtime.Result, error) {
	unlock, err := a.lock(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	lease, err := a.takeLease(ctx, sessionID, false)
	if err != nil {
		unlock()
		return nil, err
	}
	defer a.endLease(lease, unlock)
	st, err := a.logState(ctx, sessionID, nil)
	if err != nil {
		return nil, fmt.Errorf("agent: session %q: %w", sessionID, err)
	}
	if _, ok := st.Suspended[callID]; !ok {
		return nil, fmt.Errorf("%w: call %q of session %q", ErrNotSuspended, callID, sessionID)
	}
	run, err := a.suspendedRun(ctx, sessionID, callID, st.Open[callID])
	var broken *unresumable
	if errors.As(err, &broken) {
		return a.endUnresumable(ctx, sessionID, callID, st, lease, broken)
	}
	if err != nil {
		return nil, err
	}
	if len(run.pending) > 0 {
		return nil, fmt.Errorf("%w: %d ask(s) of run %q are unanswered", ErrWaiting, len(run.pending), callID)
	}
	if name := a.missingTool(st.Scope, run); name != "" && a.opts.Now().Sub(run.at) < a.opts.ApprovalTimeout {
		// An upstream not connected yet (after a restart, say): a call the
		// run must repeat waits for its tool, for as long as an ask would.
		return nil, fmt.Errorf("%w: tool %q of run %q is not available", ErrWaiting, name, callID)
	}
	logCtx := context.WithoutCancel(ctx)
	w := newLogWriter(a.store, sessionID, nil, lease, a.checkpoint(sessionID, st))
	resumed, err := entriesEvents("tool/code-resumed", entry{session.TypeCodeResumed, session.CodeResumed{CallID: callID}})
	if err != nil {
		return nil, err
	}
	if _, err := w.commit(logCtx, resumed...); err != nil {
		return nil, err
	}
	res := a.rt.Execute(logCtx, runtime.Request{
		CallID: callID, Name: registry.RunCode, Arguments: run.call.Arguments,
		Scope: st.Scope, SessionID: sessionID, CodeEntry: true, Resumed: true,
		Approver: &approver{a: a, sessionID: sessionID, w: w},
		Run:      runtime.RunOptions{Events: &sink{a: a, w: w}, Hold: a.opts.Hold, Resume: run.resume},
	})
	if res.Code() != registry.CodeSuspended {
		events, err := entriesEvents("tool/result", entry{session.TypeToolResult, session.ToolResultOf(callID, res)})
		if err != nil {
			return nil, err
		}
		w.submit(logCtx, events...)
	}
	if err := w.durable(logCtx); err != nil {
		return nil, err
	}
	if written, ok := w.written(); ok {
		st.applyOwn(written)
	}
	a.opts.Logger.Info("agent: resumed a suspended run", "session", sessionID, "call_id", callID, "code", string(res.Code()))
	return res, nil
}

// suspended is what the log holds of a suspended run.
type suspended struct {
	call    session.ToolCall
	at      time.Time // when the run's tool/call was logged
	resume  *bridge.Resume
	pending []session.ApprovalAsked // asks it waits for that have no answer, in ask order
	asked   map[string]time.Time    // when each pending ask was made, by approval id
}

// suspendedRun reads the run's events, from its tool/call at seq on.
func (a *Agent) suspendedRun(ctx context.Context, sessionID, callID string, seq int64) (*suspended, error) {
	var events []session.Event
	var call *session.ToolCall
	var at time.Time
	err := session.Pages(ctx, a.store, sessionID, seq-1, scanPage, readBytes, func(page []session.Event) bool {
		for _, e := range page {
			if e.Type == session.TypeToolCall && call == nil {
				if p, ok := e.Payload().(*session.ToolCall); ok && p.CallID == callID {
					call, at = p, e.Time
				}
				continue
			}
			if nestedOrAsk(e) {
				events = append(events, e)
			}
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("agent: read session %q: %w", sessionID, err)
	}
	if call == nil {
		return nil, fmt.Errorf("%w: call %q of session %q has no tool/call", ErrNotSuspended, callID, sessionID)
	}
	rs, err := bridge.ResumeOf(callID, events)
	if err != nil {
		return nil, &unresumable{err}
	}
	out := &suspended{call: *call, at: at, resume: rs, asked: map[string]time.Time{}}
	answered := map[string]bool{}
	for _, e := range events {
		switch p := e.Payload().(type) {
		case *session.ApprovalAsked:
			if rs.Waiting[p.CallID] {
				out.pending = append(out.pending, *p)
				out.asked[p.ApprovalID] = e.Time
			}
		case *session.ApprovalAnswered:
			answered[p.ApprovalID] = true
		}
	}
	out.pending = deleteAnswered(out.pending, answered)
	return out, nil
}

// missingTool names a tool the scope's view lacks that a call of the run
// must run again (it waited for its ask, or started and never settled);
// "" when there is none.
func (a *Agent) missingTool(scope string, run *suspended) string {
	v, err := a.rt.Registry().View(scope)
	if err != nil {
		return ""
	}
	for _, s := range run.resume.Starts {
		if _, settled := run.resume.Settled[s.Number]; settled {
			continue
		}
		if _, ok := v.Get(s.Name); !ok {
			return s.Name
		}
	}
	return ""
}

func deleteAnswered(asks []session.ApprovalAsked, answered map[string]bool) []session.ApprovalAsked {
	out := asks[:0]
	for _, p := range asks {
		if !answered[p.ApprovalID] {
			out = append(out, p)
		}
	}
	return out
}

// nestedOrAsk reports whether e may belong to a run: a nested call, a
// suspension or an ask (ResumeOf and the asks' own call ids say whose).
func nestedOrAsk(e session.Event) bool {
	switch e.Type {
	case session.TypeCodeDispatchStart, session.TypeCodeDispatch, session.TypeCodeSuspended,
		session.TypeApprovalAsked, session.TypeApprovalAnswered:
		return true
	}
	return false
}

// MaxResuming bounds the runs one agent resumes at once: answers to many
// suspended runs at one moment (or a restart with many ready) queue for a
// turn rather than start that many programs together.
const MaxResuming = 16

// resumeLater resumes the run in the background, in one of MaxResuming
// turns, when it no longer waits; a run that still waits, or that another
// process resumed, is left.
func (a *Agent) resumeLater(sessionID, callID string) {
	a.resumes.Lock()
	defer a.resumes.Unlock()
	if a.resumesClosed {
		return // the process stops: the run stays suspended, for the next
	}
	a.resumesRunning.Add(1)
	gopool.Go(func() {
		defer a.resumesRunning.Done()
		a.resuming <- struct{}{}
		defer func() { <-a.resuming }()
		_, err := a.Resume(context.Background(), sessionID, callID)
		switch {
		case err == nil, errors.Is(err, ErrWaiting), errors.Is(err, ErrNotSuspended), errors.Is(err, session.ErrLeased):
		case errors.Is(err, session.ErrNotFound):
			a.opts.Logger.Info("agent: a suspended run's session is gone (deleted, or its retention ended)", "session", sessionID, "call_id", callID)
		default:
			a.opts.Logger.Warn("agent: a suspended run could not resume; it is tried again later", "session", sessionID, "call_id", callID, "err", err)
		}
	})
}

// runOf is the run_code call an ask belongs to: the call itself, or the run
// whose sub-call asked ("<run>:code:<n>").
func runOf(askCallID string) string {
	if i := strings.Index(askCallID, ":code:"); i >= 0 {
		return askCallID[:i]
	}
	return askCallID
}

// ResumeWaiting looks at every suspended run: the asks it waits for that are
// older than Options.ApprovalTimeout are answered "timeout", and a run that
// no longer waits resumes (in the background). It returns how many runs it
// set resuming. Run it at start and periodically: a run whose last ask was
// answered by a process that stopped before resuming it resumes here.
func (a *Agent) ResumeWaiting(ctx context.Context) (int, error) {
	open, err := a.store.OpenCalls(ctx)
	if err != nil {
		return 0, fmt.Errorf("agent: list open calls: %w", err)
	}
	started := 0
	var errs []error
	for _, oc := range open {
		if oc.Call.Name != registry.RunCode {
			continue
		}
		ready, err := a.expireAsks(ctx, oc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ready {
			a.resumeLater(oc.SessionID, oc.Call.CallID)
			started++
		}
	}
	return started, errors.Join(errs...)
}

// expireAsks answers "timeout" to the asks of a suspended run that are older
// than the approval timeout, and reports whether the run waits no more.
func (a *Agent) expireAsks(ctx context.Context, oc session.OpenCall) (bool, error) {
	run, err := a.suspendedRun(ctx, oc.SessionID, oc.Call.CallID, oc.Seq)
	if err != nil {
		return false, err
	}
	if len(run.resume.Waiting) == 0 && !run.resume.Suspended {
		return false, nil // not a suspended run: one running, or one recovery closes
	}
	now := a.opts.Now()
	var entries []entry
	for _, p := range run.pending {
		if now.Sub(run.asked[p.ApprovalID]) < a.opts.ApprovalTimeout {
			continue
		}
		entries = append(entries, entry{session.TypeApprovalAnswered, session.ApprovalAnswered{
			ApprovalID: p.ApprovalID, CallID: p.CallID, Decision: session.DecisionTimeout,
			Reason: fmt.Sprintf("nobody answered the approval request within %s", a.opts.ApprovalTimeout),
		}})
	}
	if len(entries) > 0 {
		if _, err := a.appendEvents(ctx, oc.SessionID, "approval timeout", entries...); err != nil {
			return false, err
		}
	}
	return len(entries) == len(run.pending), nil
}

// unresumable is a suspended run whose log cannot be replayed.
type unresumable struct{ err error }

func (u *unresumable) Error() string { return "the run cannot resume: " + u.err.Error() }

// endUnresumable gives a suspended run whose log cannot be replayed its
// result: CODE_RUN_FAILED, saying why.
func (a *Agent) endUnresumable(ctx context.Context, sessionID, callID string, st *logState, lease *session.Lease, why *unresumable) (*runtime.Result, error) {
	res := runtime.Failed(callID, registry.RunCode, registry.CodeCodeRunFailed, why.Error())
	w := newLogWriter(a.store, sessionID, nil, lease, a.checkpoint(sessionID, st))
	events, err := entriesEvents("tool/result", entry{session.TypeToolResult, session.ToolResultOf(callID, res)})
	if err != nil {
		return nil, err
	}
	if _, err := w.commit(context.WithoutCancel(ctx), events...); err != nil {
		return nil, err
	}
	if written, ok := w.written(); ok {
		st.applyOwn(written)
	}
	a.opts.Logger.Warn("agent: a suspended run cannot resume; it failed", "session", sessionID, "call_id", callID, "err", why.err)
	return res, nil
}

// StopResuming makes the agent start no more resumptions and waits for those
// under way to end (each within its run's limits). The service calls it as it
// stops, before its workers and store close under the runs: a run that had
// not resumed stays suspended, for the next process or replica.
func (a *Agent) StopResuming() {
	a.resumes.Lock()
	a.resumesClosed = true
	a.resumes.Unlock()
	a.resumesRunning.Wait()
}
