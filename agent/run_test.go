package agent_test

import (
	"context"
	"encoding/json"
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
	res, calls, err := e.agent.Run(context.Background(), e.sid, code, "", agent.RunOptions{CallID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
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
	res, _, err := e.agent.Run(context.Background(), e.sid, "while (true) {}", "spin", agent.RunOptions{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Code() != registry.CodeCodeRunFailed || res.Error().Kind != "timeout" {
		t.Fatalf("result: %+v", res.Error())
	}
	if r := ofType[session.ToolResult](t, e.events(t), session.TypeToolResult); len(r) != 1 || r[0].Error.Kind != "timeout" {
		t.Fatalf("logged: %+v", r)
	}
}
