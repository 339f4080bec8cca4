package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// Interrupted is the message of the result Recover gives a call that a
// stopped process left open.
const Interrupted = "interrupted: the process stopped before this call finished"

// reasonStopped is the reason of the answers Recover gives pending approvals.
const reasonStopped = "process stopped"

// Recover closes what a stopped process left open, in every session: each
// tool/call without a tool/result whose event is older than olderThan (0:
// all of them) gets a tool/result with is_error and error {ABORTED,
// Interrupted}. Before it, in the same append, the call's nested SDK calls
// that never settled get a failed tool/code-dispatch and its pending
// approvals (its own and its sub-calls') an approval/answered with decision
// "cancelled", reason "process stopped". Nothing already in the log changes
// and the session keeps working. It returns how many calls it closed;
// running it again closes nothing more.
//
// Run it at start, before serving, or with an olderThan longer than any call
// can take: a call still running in another process would be closed under
// it (its late result then follows the interrupted one). With leases, the
// calls of a process that stopped are closed sooner by RecoverLapsed.
func (a *Agent) Recover(ctx context.Context, olderThan time.Duration) (int, error) {
	open, err := a.store.OpenCalls(ctx)
	if err != nil {
		return 0, fmt.Errorf("agent: list open calls: %w", err)
	}
	cutoff := a.opts.Now().Add(-olderThan)
	closed := 0
	var errs []error
	for len(open) > 0 {
		// OpenCalls orders by session: take one session's calls at a time.
		n := 1
		for n < len(open) && open[n].SessionID == open[0].SessionID {
			n++
		}
		c, err := a.recoverSession(ctx, open[0].SessionID, open[:n], olderThan > 0, cutoff, nil)
		closed += c
		if err != nil {
			errs = append(errs, err)
		}
		open = open[n:]
	}
	return closed, errors.Join(errs...)
}

// RecoverLapsed closes, as Recover does, the open calls of the sessions
// whose lease lapsed: the process that held it stopped renewing it (it
// crashed, or lost the store) while its step had calls open. It takes each
// such lease over first, so that the holder, if it comes back, can write
// nothing more, and two processes never close the same calls; it leaves a
// session alone whose lease another process took meanwhile, or whose step
// still runs in this one. It releases the leases it took, open calls or
// none, and returns how many calls it closed. It does nothing without
// Options.Leases or with a store that is no session.LeaseSweeper.
func (a *Agent) RecoverLapsed(ctx context.Context) (int, error) {
	sw, ok := a.store.(session.LeaseSweeper)
	if !a.opts.Leases || !ok {
		return 0, nil
	}
	ids, open, err := sw.LapsedLeases(ctx)
	if err != nil {
		return 0, fmt.Errorf("agent: list lapsed leases: %w", err)
	}
	closed := 0
	var errs []error
	for _, id := range ids {
		n := 0
		for n < len(open) && open[n].SessionID == id {
			n++
		}
		c, err := a.takeOver(ctx, id, open[:n])
		closed += c
		if err != nil {
			errs = append(errs, err)
		}
		open = open[n:]
	}
	return closed, errors.Join(errs...)
}

// closeLeft closes, as Recover does, the calls a session's log has open
// when a step starts under its lease: no other step of the session runs,
// elsewhere (the lease) or here (the lock), so the step that made them is
// gone (its process stopped, or its lease lapsed and its writes are
// fenced), and the new step's calls must not follow calls without results.
// It reports whether it closed any. Without a lease it does nothing: agents
// sharing a store without leases may step one session at once.
func (a *Agent) closeLeft(ctx context.Context, sessionID string, st *logState, lease *session.Lease) (bool, error) {
	if lease == nil || len(st.Open) == 0 {
		return false, nil
	}
	open := make([]session.OpenCall, 0, len(st.Open))
	for id, seq := range st.Open {
		if _, waits := st.Suspended[id]; !waits {
			open = append(open, session.OpenCall{SessionID: sessionID, Seq: seq, Call: session.ToolCall{CallID: id}})
		}
	}
	if len(open) == 0 {
		return false, nil
	}
	slices.SortFunc(open, func(x, y session.OpenCall) int { return cmp.Compare(x.Seq, y.Seq) })
	n, err := a.recoverSession(ctx, sessionID, open, false, time.Time{}, lease)
	return n > 0, err
}

// takeOver takes a lapsed lease, closes the session's open calls under it,
// and releases it.
func (a *Agent) takeOver(ctx context.Context, sessionID string, open []session.OpenCall) (int, error) {
	unlock, ok := a.tryLock(sessionID)
	if !ok {
		return 0, nil // a step of this process runs it
	}
	defer unlock()
	l, err := a.store.AcquireLease(ctx, sessionID, a.owner, a.opts.LeaseTTL)
	if errors.Is(err, session.ErrLeased) || errors.Is(err, session.ErrNotFound) {
		return 0, nil // taken meanwhile, or deleted
	}
	if err != nil {
		return 0, fmt.Errorf("agent: take over the lease of session %q: %w", sessionID, err)
	}
	closed := 0
	if len(open) > 0 {
		closed, err = a.recoverSession(ctx, sessionID, open, false, time.Time{}, &l)
	}
	if rerr := a.store.ReleaseLease(ctx, l); rerr != nil && !errors.Is(rerr, session.ErrLeaseLost) && err == nil {
		err = fmt.Errorf("agent: release the lease of session %q: %w", sessionID, rerr)
	}
	return closed, err
}

// recoverSession closes one session's open calls in one atomic append,
// fenced by lease when it is not nil. A call closed by a tool/result found
// on the way (its holder wrote it after the calls were listed) is left.
func (a *Agent) recoverSession(ctx context.Context, sessionID string, open []session.OpenCall, useCutoff bool, cutoff time.Time, lease *session.Lease) (int, error) {
	// Everything an open call left (its nested calls, its approvals) follows
	// its tool/call: the log is read from the first open call on, a page at
	// a time, not from its start.
	first := open[0].Seq
	for _, oc := range open {
		first = min(first, oc.Seq)
	}
	lg := newOpenLog(open)
	if err := session.Pages(ctx, a.store, sessionID, first-1, recoverPage, readBytes, func(events []session.Event) bool {
		lg.scan(events)
		return true
	}); err != nil {
		return 0, fmt.Errorf("agent: read session %q: %w", sessionID, err)
	}
	now := a.opts.Now().UTC()
	var entries []entry
	closed, kept := 0, 0
	for _, oc := range open {
		if useCutoff && lg.times[oc.Seq].After(cutoff) || lg.closed[oc.Call.CallID] {
			continue
		}
		id := oc.Call.CallID
		if lg.suspended[id] {
			continue // it waits to resume (Resume), not for recovery
		}
		if lg.journaled[id] {
			// A run that logged what replaying it needs resumes instead: it is
			// suspended here, waiting for the asks still pending.
			var waiting []string
			for _, ask := range lg.approvals {
				if strings.HasPrefix(ask.CallID, id+":code:") {
					waiting = append(waiting, ask.CallID)
				}
			}
			entries = append(entries, entry{session.TypeCodeSuspended, session.CodeSuspended{CallID: id, Waiting: nonNilStrings(waiting)}})
			kept++
			continue
		}
		for _, d := range lg.dispatches {
			if d.RootCallID == id {
				entries = append(entries, entry{session.TypeCodeDispatch, session.CodeDispatch{
					CodeDispatchStart: d.CodeDispatchStart,
					IsError:           true, Content: []registry.ContentBlock{registry.Text(Interrupted)},
					Error:     &session.ErrorInfo{Code: registry.CodeAborted, Message: Interrupted},
					StartedAt: d.startedAt, EndedAt: now,
				}})
			}
		}
		for _, ask := range lg.approvals {
			if ask.CallID == id || strings.HasPrefix(ask.CallID, id+":code:") {
				entries = append(entries, entry{session.TypeApprovalAnswered, session.ApprovalAnswered{
					ApprovalID: ask.ApprovalID, CallID: ask.CallID, Decision: session.DecisionCancelled, Reason: reasonStopped,
				}})
			}
		}
		entries = append(entries, entry{session.TypeToolResult, session.ToolResult{CallID: id, Result: session.Result{
			IsError: true,
			Content: []registry.ContentBlock{registry.Text(Interrupted)},
			Error:   &session.ErrorInfo{Code: registry.CodeAborted, Message: Interrupted},
		}}})
		closed++
	}
	if closed+kept == 0 {
		return 0, nil
	}
	if _, err := a.appendFenced(ctx, sessionID, "recovery", lease, entries...); err != nil {
		return 0, err
	}
	if kept > 0 {
		a.opts.Logger.Info("agent: suspended interrupted runs, to resume", "session", sessionID, "runs", kept)
	}
	if closed > 0 {
		a.opts.Logger.Info("agent: closed interrupted calls", "session", sessionID, "calls", closed)
	}
	return closed, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// recoverPage is how many events recovery reads at a time.
const recoverPage = 1000

// openLog is what recovery needs from a session's events.
type openLog struct {
	times      map[int64]time.Time     // open tool/call seq → its time
	closed     map[string]bool         // open call id → a later tool/result closed it
	dispatches []openDispatch          // started, never settled, in start order
	approvals  []session.ApprovalAsked // asked, never answered, in ask order
	suspended  map[string]bool         // runs that suspended (tool/code-suspended)
	journaled  map[string]bool         // runs whose sub-calls logged a journal: they can resume

	settled  map[string]bool // sub-call ids settled in the page being scanned
	answered map[string]bool // approval ids answered in it
}

type openDispatch struct {
	session.CodeDispatchStart
	startedAt time.Time
}

func newOpenLog(open []session.OpenCall) *openLog {
	lg := &openLog{times: map[int64]time.Time{}, closed: map[string]bool{}, settled: map[string]bool{}, answered: map[string]bool{}, suspended: map[string]bool{}, journaled: map[string]bool{}}
	for _, oc := range open {
		lg.times[oc.Seq] = time.Time{}
		lg.closed[oc.Call.CallID] = false
	}
	return lg
}

// scan folds the next page of the log in. What it keeps is bounded by what
// is still open, not by the log: an end always follows its start, so the
// ends of a page are matched with the starts so far and forgotten.
func (lg *openLog) scan(events []session.Event) {
	for _, e := range events {
		switch e.Type {
		case session.TypeToolCall:
			if _, ok := lg.times[e.Seq]; ok {
				lg.times[e.Seq] = e.Time
			}
		case session.TypeToolResult:
			if p, ok := e.Payload().(*session.ToolResult); ok {
				if _, open := lg.closed[p.CallID]; open {
					lg.closed[p.CallID] = true
				}
			}
		case session.TypeCodeSuspended:
			if p, ok := e.Payload().(*session.CodeSuspended); ok {
				lg.suspended[p.CallID] = true
			}
		case session.TypeCodeDispatchStart, session.TypeCodeDispatch, session.TypeApprovalAsked, session.TypeApprovalAnswered:
			switch p := e.Payload().(type) {
			case *session.CodeDispatchStart:
				if p.Journal != "" {
					lg.journaled[p.RootCallID] = true
				}
				lg.dispatches = append(lg.dispatches, openDispatch{*p, e.Time})
			case *session.CodeDispatch:
				lg.settled[p.SubCallID] = true
			case *session.ApprovalAsked:
				lg.approvals = append(lg.approvals, *p)
			case *session.ApprovalAnswered:
				lg.answered[p.ApprovalID] = true
			}
		}
	}
	lg.dispatches = slices.DeleteFunc(lg.dispatches, func(d openDispatch) bool { return lg.settled[d.SubCallID] })
	lg.approvals = slices.DeleteFunc(lg.approvals, func(p session.ApprovalAsked) bool { return lg.answered[p.ApprovalID] })
	clear(lg.settled)
	clear(lg.answered)
}
