package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// A client's run works in a native scope, is logged like a model's run_code
// call, and returns the nested calls in submission order.
func TestRunIsLoggedLikeAModelCall(t *testing.T) {
	e := newEnv(t, nil, registry.ModeNative, agent.Options{})
	code := `
const [x, y] = await Promise.all([
  tools.probe({id: "slow", safe: true, wait: "fast-ended"}),
  tools.probe({id: "fast", safe: true, open: "fast-ended"}),
])
const s = await tools.math_add({a: 2, b: 3})
return {sum: s.sum, ids: [x.id, y.id]}`
	rep, err := e.agent.Run(context.Background(), e.sid, code, "", agent.RunOptions{CallID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	res, calls := rep.Result, rep.Calls
	if res.IsError() {
		t.Fatalf("run failed: %+v", res.Error())
	}
	var v struct {
		Result struct {
			Sum float64
			IDs []string
		}
	}
	if err := res.Value().Unmarshal(&v); err != nil || v.Result.Sum != 5 || len(v.Result.IDs) != 2 {
		t.Fatalf("value %s: %v", res.Value(), err)
	}
	if len(calls) != 3 {
		t.Fatalf("calls: %+v", calls)
	}
	for i, want := range []string{"r1:code:1", "r1:code:2", "r1:code:3"} {
		if calls[i].SubCallID != want || calls[i].RootCallID != "r1" {
			t.Fatalf("call %d: %+v", i, calls[i])
		}
	}
	if calls[0].IsError || calls[2].Name != "math_add" || calls[0].StartedAt.IsZero() {
		t.Fatalf("calls: %+v", calls)
	}

	evs := e.events(t)
	checkClosed(t, evs)
	// Logged as the client sent it: no description was given, none is made up
	// (run_code's call card derives one for display).
	c := ofType[session.ToolCall](t, evs, session.TypeToolCall)[0]
	var args struct{ Code, Description string }
	if c.CallID != "r1" || c.Name != registry.RunCode || c.Turn != 1 || c.Step != 1 ||
		json.Unmarshal([]byte(c.Arguments), &args) != nil || args.Code != code || args.Description != "" {
		t.Fatalf("tool/call: %+v", c)
	}
	if n := len(ofType[session.CodeDispatch](t, evs, session.TypeCodeDispatch)); n != 3 {
		t.Fatalf("%d nested settlements logged", n)
	}

	// The model of a native scope cannot call run_code itself.
	step := e.step(t, runCode("m1", "return 1"))
	if step.Results[0].Result.Code() != registry.CodeUnknownTool {
		t.Fatalf("model's run_code in a native scope: %v", step.Results[0].Result.Error())
	}
}

func TestRunTimeout(t *testing.T) {
	e := newEnv(t, nil, registry.ModeCode, agent.Options{})
	rep, err := e.agent.Run(context.Background(), e.sid, "while (true) {}", "spin", agent.RunOptions{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Result
	if res.Code() != registry.CodeCodeRunFailed || res.Error().Kind != "timeout" {
		t.Fatalf("result: %+v", res.Error())
	}
	if r := ofType[session.ToolResult](t, e.events(t), session.TypeToolResult); len(r) != 1 || r[0].Error.Kind != "timeout" {
		t.Fatalf("logged: %+v", r)
	}
}

// Run hands back the program's calls within a byte budget: past it calls are
// trimmed, then left out, and counted; the log keeps every call whole.
func TestRunBoundsTheCallsItHandsBack(t *testing.T) {
	e := newEnv(t, nil, registry.ModeCode, agent.Options{})
	code := `const big = "x".repeat(3000)
for (let i = 0; i < 40; i++) await tools.probe({id: "p" + i, note: big})
return "done"`
	rep, err := e.agent.Run(context.Background(), e.sid, code, "", agent.RunOptions{MaxCallsBytes: 20 << 10})
	if err != nil || rep.Result.IsError() {
		t.Fatalf("%v %+v", err, rep)
	}
	if rep.Trimmed == 0 || rep.Omitted == 0 || len(rep.Calls)+rep.Omitted != 40 {
		t.Fatalf("kept %d, trimmed %d, omitted %d", len(rep.Calls), rep.Trimmed, rep.Omitted)
	}
	total := 0
	for i, c := range rep.Calls {
		total += len(c.Arguments)
		if i > 0 && c.Number <= rep.Calls[i-1].Number {
			t.Fatal("calls out of order")
		}
	}
	if total > 20<<10 {
		t.Fatalf("%d bytes of arguments handed back, over the 20 KiB budget", total)
	}
	last := rep.Calls[len(rep.Calls)-1]
	if !strings.Contains(string(last.Arguments), "the session log has them whole") {
		t.Fatalf("a trimmed call has no marker: %s", last.Arguments)
	}
	if n := len(ofType[session.CodeDispatch](t, e.events(t), session.TypeCodeDispatch)); n != 40 {
		t.Fatalf("the log has %d of the 40 calls", n)
	}
	for _, d := range ofType[session.CodeDispatchStart](t, e.events(t), session.TypeCodeDispatchStart) {
		if len(d.Arguments) < 3000 {
			t.Fatalf("the log trimmed a call's arguments: %d bytes", len(d.Arguments))
		}
	}
}
