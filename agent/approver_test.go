package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// TestApproverCallback: Options.Approver sees each ask once it is logged,
// with the validated arguments; Allow and Reject are logged as the answer
// that decides the call, Defer leaves the ask to the log, and an error
// rejects. Nested sub-calls ask the same approver.
func TestApproverCallback(t *testing.T) {
	nested := runCode("c1", `const r = await tools.probe({id: "n", ask: true}); return r.id`)
	tests := []struct {
		name         string
		call         agent.ToolCall
		verdict      agent.Verdict
		err          error
		wantCode     registry.Code
		wantMessage  string
		wantDecision string
		wantAsk      string // the call id asked about
		wantNested   bool
		wantRan      bool
	}{
		{name: "allow", call: probe("c1", probeArgs{Ask: true}), verdict: agent.Allow("ok by Go"),
			wantDecision: session.DecisionAllow, wantAsk: "c1", wantRan: true},
		{name: "reject", call: probe("c1", probeArgs{Ask: true}), verdict: agent.Reject("not in Go either"),
			wantCode: registry.CodeApprovalRejected, wantMessage: "not in Go either", wantDecision: session.DecisionDeny, wantAsk: "c1"},
		{name: "error rejects", call: probe("c1", probeArgs{Ask: true}), err: errors.New("ui down"),
			wantCode: registry.CodeApprovalRejected, wantMessage: "ui down", wantDecision: session.DecisionDeny, wantAsk: "c1"},
		{name: "nested sub-call", call: nested, verdict: agent.Allow(""),
			wantDecision: session.DecisionAllow, wantAsk: "c1:code:1", wantNested: true, wantRan: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asks []agent.Ask
			var e *env
			e = newEnv(t, nil, registry.ModeBoth, agent.Options{Approver: agent.ApproverFunc(func(ctx context.Context, ask agent.Ask) (agent.Verdict, error) {
				// The ask is durable before the approver hears of it.
				if pending, err := e.agent.Approvals(ctx, ask.SessionID); err != nil || len(pending) != 1 || pending[0].ID != ask.ApprovalID {
					t.Errorf("ask not pending in the log when the approver was called: %+v, %v", pending, err)
				}
				asks = append(asks, ask)
				return tt.verdict, tt.err
			})})
			askForProbe(e.rt)
			res := e.step(t, tt.call)
			mustOutcome(t, res.Results[0].Result, tt.wantCode, tt.wantMessage)
			if len(asks) != 1 {
				t.Fatalf("approver called %d times", len(asks))
			}
			ask := asks[0]
			var args probeArgs
			if ask.SessionID != e.sid || ask.CallID != tt.wantAsk || ask.Tool != "probe" || ask.Reason != "probe wants a person" ||
				ask.Nested != tt.wantNested || json.Unmarshal(ask.Arguments, &args) != nil || !args.Ask {
				t.Fatalf("approver saw %+v", ask)
			}
			if ran := slices.Contains(e.rec.log(), "start:n") || slices.Contains(e.rec.log(), "start:c1"); ran != tt.wantRan {
				t.Fatalf("body ran = %v, want %v", ran, tt.wantRan)
			}
			answers := ofType[session.ApprovalAnswered](t, e.events(t), session.TypeApprovalAnswered)
			if len(answers) != 1 || answers[0].ApprovalID != ask.ApprovalID || answers[0].Decision != tt.wantDecision {
				t.Fatalf("answers logged: %+v", answers)
			}
		})
	}
}

// TestApproverDefer: a deferred ask waits in the log and is answered there.
func TestApproverDefer(t *testing.T) {
	deferred := make(chan agent.Ask, 1)
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{Approver: agent.ApproverFunc(func(_ context.Context, ask agent.Ask) (agent.Verdict, error) {
		deferred <- ask
		return agent.Defer(), nil
	})})
	askForProbe(e.rt)
	done := make(chan agent.StepResult, 1)
	go func() {
		res, err := e.agent.Step(context.Background(), e.sid, []agent.ToolCall{probe("c1", probeArgs{Ask: true})})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	ask := <-deferred
	answer(t, e.agent, e.sid, ask.ApprovalID, false, "later, in the log")
	r := (<-done).Results[0].Result
	if r.Code() != registry.CodeApprovalRejected {
		t.Fatalf("code = %q, want APPROVAL_REJECTED", r.Code())
	}
	mustContain(t, r.Error().Message, "later, in the log")
}
