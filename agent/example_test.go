package agent_test

import (
	"context"
	"fmt"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/examples/tools"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/session"
)

func ExampleAgent_Step() {
	reg := registry.New()
	_ = reg.CreateScope("default", registry.Global, registry.ModeBoth)
	_, _ = tools.New().Register(reg, "default")
	rt := runtime.New(reg, runtime.Options{})
	bridge.Install(rt, bridge.Options{})

	store := session.NewMemory()
	ctx := context.Background()
	_ = store.CreateSession(ctx, session.Session{ID: "s1", Scope: "default"})
	a := agent.New(rt, store, agent.Options{})

	res, err := a.Step(ctx, "s1", []agent.ToolCall{
		{ID: "call_1", Name: "math_add", Arguments: `{"a": 2, "b": 3}`},
		{ID: "call_2", Name: "run_code", Arguments: `{"code": "return (await tools.math_add({a: 1, b: 1})).sum", "description": "add"}`},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res.Results {
		fmt.Println(r.ToolCallID, r.Result.Content()[0].Text)
	}
	events, _ := store.Events(ctx, "s1", 0, 0)
	for _, e := range events {
		fmt.Println(e.Seq, e.Type)
	}
	// Output:
	// call_1 {
	//   "sum": 5
	// }
	// call_2 2
	// 1 tool/call
	// 2 tool/result
	// 3 tool/call
	// 4 tool/code-dispatch-start
	// 5 tool/code-dispatch
	// 6 tool/result
}
