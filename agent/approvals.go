package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codemode/codemode/internal/requestid"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/session"
)

// PendingApproval is an ask waiting for a person: an approval/asked event
// with no approval/answered for its id.
type PendingApproval struct {
	ID        string          `json:"id"`
	CallID    string          `json:"call_id"` // the asking call (a sub-call id for a program's SDK call)
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason"`
	AskedAt   time.Time       `json:"asked_at"`
}

// Approvals lists the session's pending asks in the order they were made.
// It reads only the log, so any process sharing the store sees the asks of
// every other. It fails with session.ErrNotFound for an unknown session.
func (a *Agent) Approvals(ctx context.Context, sessionID string) ([]PendingApproval, error) {
	return a.WatchApprovals(sessionID).Pending(ctx)
}

// ApprovalWatch follows a session's asks for a caller that asks again and
// again (a client polling a task): each Pending reads only the events
// logged since the last one read. It is safe for concurrent use.
type ApprovalWatch struct {
	a         *Agent
	sessionID string

	mu    sync.Mutex
	after int64             // the last event read; guarded by mu
	open  []PendingApproval // asks not answered yet, in order; guarded by mu
}

// WatchApprovals returns a watch of the session's asks; nothing is read
// until Pending.
func (a *Agent) WatchApprovals(sessionID string) *ApprovalWatch {
	return &ApprovalWatch{a: a, sessionID: sessionID}
}

// Pending is Agent.Approvals, reading the log from where the last Pending
// stopped.
func (w *ApprovalWatch) Pending(ctx context.Context) ([]PendingApproval, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := session.Pages(ctx, w.a.store, w.sessionID, w.after, scanPage, readBytes, func(page []session.Event) bool {
		for _, e := range page {
			w.after = e.Seq
			if !isApproval(e) {
				continue
			}
			switch p := e.Payload().(type) {
			case *session.ApprovalAsked:
				w.open = append(w.open, PendingApproval{ID: p.ApprovalID, CallID: p.CallID, Tool: p.Tool, Arguments: p.Arguments, Reason: p.Reason, AskedAt: e.Time})
			case *session.ApprovalAnswered:
				w.open = slices.DeleteFunc(w.open, func(q PendingApproval) bool { return q.ID == p.ApprovalID })
			}
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("agent: read session %q: %w", w.sessionID, err)
	}
	return append([]PendingApproval{}, w.open...), nil
}

// AsksOf is the asks of pending that belong to the calls callIDs: their
// own, and those of their programs' SDK calls (sub-call ids
// "<call id>:code:<n>"). It is never nil.
func AsksOf(pending []PendingApproval, callIDs ...string) []PendingApproval {
	out := []PendingApproval{}
	for _, p := range pending {
		for _, id := range callIDs {
			if p.CallID == id || strings.HasPrefix(p.CallID, id+":code:") {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// Answer answers a pending ask by appending approval/answered with decision
// "allow" or "deny" and the reason; the waiting call resumes (dispatched, or
// denied as APPROVAL_REJECTED with the reason), in whichever process it
// waits. It fails with ErrNotFound when the session has no such pending
// approval (ErrAnswered, which is also an ErrNotFound, when it was answered
// already) and with session.ErrNotFound for an unknown session. When answers
// race, the first in the log decides; a later one fails with ErrAnswered.
func (a *Agent) Answer(ctx context.Context, sessionID, approvalID string, allow bool, reason string) error {
	a.answering.Lock()
	defer a.answering.Unlock()
	var ask *session.ApprovalAsked
	var answered *session.ApprovalAnswered
	var last int64 // the last event read: answers after it are another process's
	suspended := map[string]bool{}
	err := a.eachEvent(ctx, sessionID, func(e session.Event) bool {
		last = e.Seq
		if e.Type == session.TypeCodeSuspended {
			if p, ok := e.Payload().(*session.CodeSuspended); ok {
				suspended[p.CallID] = true
			}
		}
		if !isApproval(e) {
			return true
		}
		switch p := e.Payload().(type) {
		case *session.ApprovalAsked:
			if p.ApprovalID == approvalID && ask == nil {
				ask = p
			}
		case *session.ApprovalAnswered:
			if p.ApprovalID == approvalID {
				answered = p
				return false
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("agent: read session %q: %w", sessionID, err)
	}
	if answered != nil {
		return fmt.Errorf("%w: approval %q was already answered (%s)", ErrAnswered, approvalID, answered.Decision)
	}
	if ask == nil {
		return fmt.Errorf("%w: no approval %q in session %q", ErrNotFound, approvalID, sessionID)
	}
	decision := session.DecisionDeny
	if allow {
		decision = session.DecisionAllow
	}
	ours, err := a.appendEvents(ctx, sessionID, "approval/answered", entry{session.TypeApprovalAnswered, session.ApprovalAnswered{
		ApprovalID: approvalID, CallID: ask.CallID, Decision: decision, Reason: reason, RequestID: requestid.From(ctx),
	}})
	if err != nil {
		return err
	}
	// Another process may have answered between our read and our append.
	first, err := a.firstAnswer(ctx, sessionID, approvalID, last, ours[0].Seq)
	if err == nil && first.seq != ours[0].Seq {
		return fmt.Errorf("%w: approval %q was already answered (%s)", ErrAnswered, approvalID, first.Decision)
	}
	if run := runOf(ask.CallID); suspended[run] {
		a.resumeLater(sessionID, run) // the run resumes here once it waits for nothing more
	}
	return nil
}

// isApproval reports whether e is an approval event, the only ones the
// scans here decode: a session's log is mostly nested dispatches, whose
// payloads (every sub-call's arguments and content) cost the most to decode.
func isApproval(e session.Event) bool {
	return e.Type == session.TypeApprovalAsked || e.Type == session.TypeApprovalAnswered
}

// answerTo decodes e when it answers the approval id.
func answerTo(e session.Event, approvalID string) (session.ApprovalAnswered, bool) {
	if e.Type != session.TypeApprovalAnswered {
		return session.ApprovalAnswered{}, false
	}
	if p, ok := e.Payload().(*session.ApprovalAnswered); ok && p.ApprovalID == approvalID {
		return *p, true
	}
	return session.ApprovalAnswered{}, false
}

// answer is an approval/answered found in the log.
type answer struct {
	session.ApprovalAnswered
	seq int64
}

// firstAnswer finds the first answer to approvalID among the events with
// after < seq <= until, which must hold one.
func (a *Agent) firstAnswer(ctx context.Context, sessionID, approvalID string, after, until int64) (answer, error) {
	events, err := a.store.Events(ctx, sessionID, after, int(until-after))
	if err != nil {
		return answer{}, err
	}
	for _, e := range events {
		if p, ok := answerTo(e, approvalID); ok {
			return answer{p, e.Seq}, nil
		}
	}
	return answer{}, fmt.Errorf("agent: approval %q has no answer up to seq %d", approvalID, until)
}

// approver routes a session's asks through its log, writing through the
// step's writer so that an ask follows everything the step logged before it.
type approver struct {
	a         *Agent
	sessionID string
	w         *logWriter
}

var _ runtime.Approver = (*approver)(nil)

// Approve implements runtime.Approver: it appends approval/asked, asks
// Options.Approver when there is one (its Allow or Reject is logged as the
// answer), and otherwise waits for the first approval/answered with its id to appear in the log, from any
// process. When none comes within Options.ApprovalTimeout it logs decision
// "timeout" and denies; when ctx ends first it logs "cancelled". Every ask
// ends with exactly one answer in the log, unless the store fails.
func (p *approver) Approve(ctx context.Context, req runtime.ApprovalRequest) runtime.ApprovalAnswer {
	a := p.a
	logCtx := context.WithoutCancel(ctx)
	if req.Resumed {
		// The call asked before its run suspended (or its process stopped):
		// that ask is the one to wait for.
		if earlier, ok := p.earlierAsk(logCtx, req.Call.CallID); ok {
			if earlier.answered != nil {
				return decide(*earlier.answered)
			}
			return p.await(ctx, req, earlier.ApprovalID, earlier.seq, a.opts.ApprovalTimeout-a.opts.Now().Sub(earlier.at))
		}
	}
	id := a.opts.NewID()
	asked, err := p.commit(logCtx, "approval/asked", entry{session.TypeApprovalAsked, session.ApprovalAsked{
		ApprovalID: id, CallID: req.Call.CallID, Tool: req.Call.Name,
		Arguments: json.RawMessage(req.Call.Args.Bytes()), Reason: req.Reason,
	}})
	if err != nil {
		a.opts.Logger.Error("agent: approval not asked", "session", p.sessionID, "call_id", req.Call.CallID, "err", err)
		return runtime.ApprovalAnswer{Outcome: runtime.ApprovalNone, Reason: "the approval request could not be logged"}
	}

	after := asked[0].Seq
	if ap := a.opts.Approver; ap != nil {
		v := callApprover(ap, ctx, Ask{
			SessionID: p.sessionID, ApprovalID: id, CallID: req.Call.CallID, Tool: req.Call.Name,
			Arguments: json.RawMessage(req.Call.Args.Bytes()), Reason: req.Reason,
			Nested: req.Call.Nested(), Hints: toolHints(req.Call.Tool),
		})
		if v.kind != verdictDefer {
			own := session.ApprovalAnswered{ApprovalID: id, CallID: req.Call.CallID, Decision: session.DecisionAllow, Reason: v.reason}
			if v.kind == verdictReject {
				own.Decision = session.DecisionDeny
			}
			ended, err := p.commit(logCtx, "approval/answered", entry{session.TypeApprovalAnswered, own})
			if err != nil {
				a.opts.Logger.Error("agent: approval answer not logged", "session", p.sessionID, "approval_id", id, "err", err)
				return runtime.ApprovalAnswer{Outcome: runtime.ApprovalNone, Reason: "the approval answer could not be logged"}
			}
			// Someone may have answered through the log first: the first answer decides.
			if first, err := a.firstAnswer(logCtx, p.sessionID, id, after, ended[0].Seq); err == nil {
				return decide(first.ApprovalAnswered)
			}
			return decide(own)
		}
	}
	return p.await(ctx, req, id, after, a.opts.ApprovalTimeout)
}

// await waits for the first answer to the ask id (logged at seq after) to
// appear in the log, from any process, for up to timeout; then it logs
// decision "timeout" and denies, or, when ctx ends first, "cancelled". With
// req.Hold it gives up after the hold instead, the ask left pending, with
// ApprovalSuspended.
func (p *approver) await(ctx context.Context, req runtime.ApprovalRequest, id string, after int64, timeout time.Duration) runtime.ApprovalAnswer {
	a := p.a
	logCtx := context.WithoutCancel(ctx)
	hold := req.Hold > 0 && req.Hold < timeout
	wait := timeout
	if hold {
		wait = req.Hold
	}
	wctx, cancel := context.WithTimeout(ctx, max(wait, 0))
	defer cancel()
	var waitErr error
	for waitErr == nil {
		var ans session.ApprovalAnswered
		found := false
		if waitErr = session.Pages(logCtx, a.store, p.sessionID, after, scanPage, readBytes, func(events []session.Event) bool {
			for _, e := range events {
				if ans, found = answerTo(e, id); found {
					return false
				}
				after = e.Seq
			}
			return true
		}); waitErr != nil {
			break
		}
		if found {
			return decide(ans)
		}
		waitErr = a.store.Wait(wctx, p.sessionID, after)
	}

	if hold && ctx.Err() == nil && errors.Is(waitErr, context.DeadlineExceeded) {
		return runtime.ApprovalAnswer{Outcome: runtime.ApprovalSuspended, Reason: "nobody answered within the hold"}
	}
	own := session.ApprovalAnswered{ApprovalID: id, CallID: req.Call.CallID}
	switch {
	case ctx.Err() != nil:
		own.Decision, own.Reason = session.DecisionCancelled, "the call was cancelled while waiting for approval"
	case errors.Is(waitErr, context.DeadlineExceeded):
		own.Decision, own.Reason = session.DecisionTimeout, fmt.Sprintf("nobody answered the approval request within %s", a.opts.ApprovalTimeout)
	default:
		own.Decision, own.Reason = session.DecisionCancelled, fmt.Sprintf("the approval could not be awaited: %v", waitErr)
	}
	ended, err := p.commit(logCtx, "approval/answered", entry{session.TypeApprovalAnswered, own})
	if err != nil {
		a.opts.Logger.Error("agent: approval end not logged", "session", p.sessionID, "approval_id", id, "err", err)
		return decide(own)
	}
	// An answer may have landed between the last read and ours: the first
	// in the log decides.
	if first, err := a.firstAnswer(logCtx, p.sessionID, id, after, ended[0].Seq); err == nil {
		return decide(first.ApprovalAnswered)
	}
	return decide(own)
}

func toolHints(t *registry.Tool) registry.Hints {
	if t == nil {
		return registry.Hints{}
	}
	return t.Hints()
}

// commit writes an approval event through the step's writer and waits until
// it is durable: only then can a person see the ask.
func (p *approver) commit(ctx context.Context, what string, en entry) ([]session.Event, error) {
	events, err := entriesEvents(what, en)
	if err != nil {
		return nil, err
	}
	return p.w.commit(ctx, events...)
}

// decide maps a logged decision to the runtime's outcome; anything unknown
// fails closed.
func decide(ans session.ApprovalAnswered) runtime.ApprovalAnswer {
	switch ans.Decision {
	case session.DecisionAllow:
		return runtime.ApprovalAnswer{Outcome: runtime.ApprovalAllowOnce, Reason: ans.Reason}
	case session.DecisionDeny:
		return runtime.ApprovalAnswer{Outcome: runtime.ApprovalRejected, Reason: ans.Reason}
	case session.DecisionCancelled:
		return runtime.ApprovalAnswer{Outcome: runtime.ApprovalCancelled, Reason: ans.Reason}
	case session.DecisionTimeout:
		return runtime.ApprovalAnswer{Outcome: runtime.ApprovalNone, Reason: ans.Reason}
	default:
		return runtime.ApprovalAnswer{Outcome: runtime.ApprovalNone, Reason: fmt.Sprintf("unknown approval decision %q", ans.Decision)}
	}
}

// A read of a log takes pages of at most scanPage events (recoverPage in
// recovery) and, from a store that bounds reads by bytes, of about
// readBytes: a log of large events is never held a thousand at a time.
const (
	scanPage  = 1000
	readBytes = 4 << 20
)

// eachEvent calls fn for the session's events in order, a page at a time, so
// a long log is never held whole; fn returns false to stop. It fails with
// session.ErrNotFound for an unknown session.
func (a *Agent) eachEvent(ctx context.Context, sessionID string, fn func(session.Event) bool) error {
	return session.Pages(ctx, a.store, sessionID, 0, scanPage, readBytes, func(page []session.Event) bool {
		for _, e := range page {
			if !fn(e) {
				return false
			}
		}
		return true
	})
}

// loggedAsk is an ask found in the log, with its answer when it has one.
type loggedAsk struct {
	session.ApprovalAsked
	seq      int64
	at       time.Time
	answered *session.ApprovalAnswered
}

// earlierAsk finds the first ask the call made, and its first answer.
func (p *approver) earlierAsk(ctx context.Context, callID string) (loggedAsk, bool) {
	var found loggedAsk
	ok := false
	err := p.a.eachEvent(ctx, p.sessionID, func(e session.Event) bool {
		if !isApproval(e) {
			return true
		}
		switch q := e.Payload().(type) {
		case *session.ApprovalAsked:
			if q.CallID == callID && !ok {
				found, ok = loggedAsk{ApprovalAsked: *q, seq: e.Seq, at: e.Time}, true
			}
		case *session.ApprovalAnswered:
			if ok && q.ApprovalID == found.ApprovalID {
				found.answered = q
				return false
			}
		}
		return true
	})
	return found, ok && err == nil
}
