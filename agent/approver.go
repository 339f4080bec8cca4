package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/codemode/codemode/registry"
)

// Approver answers asks in Go, as they are made. The agent calls it after
// the ask is durable in the log (approval/asked), with the call's validated
// arguments; an Allow or Reject verdict is logged as the approval/answered
// that decides the call, and Defer leaves the ask pending in the log, to be
// answered there (Agent.Answer, POST /v1/sessions/{id}/approvals/{aid}) or
// timed out, exactly as without an Approver. An error or a panic rejects the
// call with the error as its reason: an approver that cannot decide never
// lets a call through.
type Approver interface {
	Approve(ctx context.Context, ask Ask) (Verdict, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, ask Ask) (Verdict, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, ask Ask) (Verdict, error) { return f(ctx, ask) }

// Ask is one pending approval as an Approver sees it.
type Ask struct {
	SessionID  string
	ApprovalID string // the id Agent.Answer would take
	CallID     string // "<parent>:code:<n>" for a run_code program's sub-call
	Tool       string
	Arguments  json.RawMessage // valid against the tool's schema; a copy
	Reason     string          // the pre-policy's reason
	Nested     bool            // a sub-call of a run_code program
	Hints      registry.Hints  // the tool's effect hints
}

// Verdict is an Approver's answer: Allow, Reject or Defer (the zero value).
type Verdict struct {
	kind   verdictKind
	reason string
}

type verdictKind uint8

const (
	verdictDefer verdictKind = iota
	verdictAllow
	verdictReject
)

// Allow dispatches the call; reason is logged with the answer.
func Allow(reason string) Verdict { return Verdict{kind: verdictAllow, reason: reason} }

// Reject denies the call as APPROVAL_REJECTED with reason.
func Reject(reason string) Verdict { return Verdict{kind: verdictReject, reason: reason} }

// Defer leaves the ask pending in the log.
func Defer() Verdict { return Verdict{} }

// callApprover runs the embedder's approver, turning an error or a panic
// into a rejection.
func callApprover(ap Approver, ctx context.Context, ask Ask) (v Verdict) {
	defer func() {
		if r := recover(); r != nil {
			v = Reject("the approver failed: " + registry.SafeString(r))
		}
	}()
	v, err := ap.Approve(ctx, ask)
	if err != nil {
		return Reject(fmt.Sprintf("the approver failed: %s", registry.SafeString(err)))
	}
	return v
}
