package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/session"
)

// askForProbe makes the pre-policy ask for probe calls with "ask": true.
func askForProbe(rt *runtime.Runtime) {
	rt.AddPrePolicy(scope, func(_ context.Context, c runtime.Call) (runtime.Decision, error) {
		var p probeArgs
		if c.Name == "probe" && c.Args.Unmarshal(&p) == nil && p.Ask {
			return runtime.Ask("probe wants a person"), nil
		}
		return runtime.Allow(), nil
	})
}

func TestApprovals(t *testing.T) {
	nested := runCode("c1", `const r = await tools.probe({id: "n", ask: true}); return r.id`)
	tests := []struct {
		name string
		call agent.ToolCall
		// act answers (or not) once the ask is logged; cancel cancels the step.
		act          func(t *testing.T, e *env, ap agent.PendingApproval, cancel func())
		timeout      time.Duration
		wantCode     registry.Code // "" for success
		wantMessage  string
		wantDecision string
		wantAskedBy  string // the call id on the ask
		wantRan      bool
	}{
		{
			name: "allow",
			call: probe("c1", probeArgs{Ask: true}),
			act: func(t *testing.T, e *env, ap agent.PendingApproval, _ func()) {
				answer(t, e.agent, e.sid, ap.ID, true, "")
			},
			wantDecision: session.DecisionAllow, wantAskedBy: "c1", wantRan: true,
		},
		{
			name: "deny with a reason",
			call: probe("c1", probeArgs{Ask: true}),
			act: func(t *testing.T, e *env, ap agent.PendingApproval, _ func()) {
				answer(t, e.agent, e.sid, ap.ID, false, "not on a Friday")
			},
			wantCode: registry.CodeApprovalRejected, wantMessage: "not on a Friday",
			wantDecision: session.DecisionDeny, wantAskedBy: "c1",
		},
		{
			name: "answered by another replica",
			call: probe("c1", probeArgs{Ask: true}),
			act: func(t *testing.T, e *env, ap agent.PendingApproval, _ func()) {
				other := agent.New(e.rt, e.store, agent.Options{})
				pending, err := other.Approvals(context.Background(), e.sid)
				if err != nil || len(pending) != 1 || pending[0].ID != ap.ID {
					t.Errorf("the other replica sees %+v, %v", pending, err)
				}
				answer(t, other, e.sid, ap.ID, true, "")
			},
			wantDecision: session.DecisionAllow, wantAskedBy: "c1", wantRan: true,
		},
		{
			name:     "nobody answers",
			call:     probe("c1", probeArgs{Ask: true}),
			act:      func(*testing.T, *env, agent.PendingApproval, func()) {},
			timeout:  50 * time.Millisecond,
			wantCode: registry.CodeDenied, wantMessage: "nobody answered",
			wantDecision: session.DecisionTimeout, wantAskedBy: "c1",
		},
		{
			name: "caller cancelled",
			call: probe("c1", probeArgs{Ask: true}),
			act: func(_ *testing.T, _ *env, _ agent.PendingApproval, cancel func()) {
				cancel()
			},
			wantCode:     registry.CodeAbortedBeforeDispatch,
			wantDecision: session.DecisionCancelled, wantAskedBy: "c1",
		},
		{
			name: "SDK sub-call of a program",
			call: nested,
			act: func(t *testing.T, e *env, ap agent.PendingApproval, _ func()) {
				answer(t, e.agent, e.sid, ap.ID, true, "")
			},
			wantDecision: session.DecisionAllow, wantAskedBy: "c1:code:1", wantRan: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil, registry.ModeBoth, agent.Options{ApprovalTimeout: tt.timeout})
			askForProbe(e.rt)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan agent.StepResult, 1)
			go func() {
				res, err := e.agent.Step(ctx, e.sid, []agent.ToolCall{tt.call})
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			waitFor(t, e.store, e.sid, isType(session.TypeApprovalAsked))
			pending, err := e.agent.Approvals(context.Background(), e.sid)
			if err != nil {
				t.Fatal(err)
			}
			if len(pending) != 1 {
				t.Fatalf("pending: %+v", pending)
			}
			ap := pending[0]
			var args probeArgs
			if ap.ID == "" || ap.CallID != tt.wantAskedBy || ap.Tool != "probe" || ap.Reason != "probe wants a person" ||
				json.Unmarshal(ap.Arguments, &args) != nil || !args.Ask {
				t.Fatalf("pending approval: %+v", ap)
			}
			tt.act(t, e, ap, cancel)
			res := <-done
			mustOutcome(t, res.Results[0].Result, tt.wantCode, tt.wantMessage)
			if ran := slices.Contains(e.rec.log(), "start:n") || slices.Contains(e.rec.log(), "start:c1"); ran != tt.wantRan {
				t.Fatalf("body ran = %v, want %v", ran, tt.wantRan)
			}
			evs := e.events(t)
			answers := ofType[session.ApprovalAnswered](t, evs, session.TypeApprovalAnswered)
			if len(answers) != 1 || answers[0].ApprovalID != ap.ID || answers[0].Decision != tt.wantDecision || answers[0].CallID != tt.wantAskedBy {
				t.Fatalf("answers logged: %+v", answers)
			}
			log := logged(t, evs)
			if !(index(log, "tool/call c1") < index(log, session.TypeApprovalAsked+" "+tt.wantAskedBy) &&
				index(log, session.TypeApprovalAnswered+" "+tt.wantAskedBy) < index(log, "tool/result c1")) {
				t.Fatalf("approval events outside their call: %v", log)
			}
			if pending, _ := e.agent.Approvals(context.Background(), e.sid); len(pending) != 0 {
				t.Fatalf("still pending: %+v", pending)
			}
		})
	}
}

func answer(t *testing.T, a *agent.Agent, sid, id string, allow bool, reason string) {
	t.Helper()
	if err := a.Answer(context.Background(), sid, id, allow, reason); err != nil {
		t.Errorf("Answer: %v", err)
	}
}

func TestAnswerErrors(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	askForProbe(e.rt)
	ctx := context.Background()
	if err := e.agent.Answer(ctx, e.sid, "nope", true, ""); !errors.Is(err, agent.ErrNotFound) {
		t.Fatalf("unknown approval: %v", err)
	}
	if err := e.agent.Answer(ctx, "no-session", "nope", true, ""); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
	if _, err := e.agent.Approvals(ctx, "no-session"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Approvals of an unknown session: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := e.agent.Step(ctx, e.sid, []agent.ToolCall{probe("c1", probeArgs{Ask: true})}); err != nil {
			t.Error(err)
		}
	}()
	ask := decode[session.ApprovalAsked](t, waitFor(t, e.store, e.sid, isType(session.TypeApprovalAsked)))
	if err := e.agent.Answer(ctx, e.sid, ask.ApprovalID, false, "first"); err != nil {
		t.Fatal(err)
	}
	if err := e.agent.Answer(ctx, e.sid, ask.ApprovalID, true, "second"); !errors.Is(err, agent.ErrNotFound) {
		t.Fatalf("second answer: %v", err)
	}
	<-done
	answers := ofType[session.ApprovalAnswered](t, e.events(t), session.TypeApprovalAnswered)
	if len(answers) != 1 || answers[0].Reason != "first" {
		t.Fatalf("answers: %+v", answers)
	}
}

// Without an agent there is no one to ask: the runtime denies, nothing runs
// and nothing is logged.
func TestAgentlessAskFailsClosed(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	askForProbe(e.rt)
	r := e.rt.Execute(context.Background(), runtime.Request{
		CallID: "c1", Name: "probe", Arguments: probeArgs{ID: "c1", Ask: true}.String(), Scope: scope, SessionID: e.sid,
	})
	if r.Code() != registry.CodeDenied {
		t.Fatalf("code = %q, want DENIED", r.Code())
	}
	if rec := e.rec.log(); len(rec) != 0 {
		t.Fatalf("body ran: %v", rec)
	}
	if evs := e.events(t); len(evs) != 0 {
		t.Fatalf("logged without an agent: %v", logged(t, evs))
	}
}
