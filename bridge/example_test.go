package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/session"
)

// printSink prints the nested dispatch events a run logs.
type printSink struct{}

func (printSink) DispatchStarted(_ context.Context, e session.CodeDispatchStart) func(context.Context) error {
	fmt.Println("start", e.SubCallID, e.Name, string(e.Arguments))
	return nil
}

func (printSink) DispatchSettled(_ context.Context, e session.CodeDispatch) {
	fmt.Println("end  ", e.SubCallID, "error:", e.IsError)
}

func Example() {
	reg := registry.New()
	reg.CreateScope("agent", registry.Global, registry.ModeCode)
	reg.Register("agent", registry.MustDefine(registry.Definition{
		Name:       "math_add",
		Parameters: &schema.Node{Type: "object", Required: []string{"a", "b"}, Properties: map[string]*schema.Node{"a": {Type: "number"}, "b": {Type: "number"}}},
		Output:     &schema.Node{Type: "number"},
		Behavior: registry.Behavior{Execute: func(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) {
			var in struct{ A, B float64 }
			err := args.Unmarshal(&in)
			return in.A + in.B, err
		}},
	}))
	rt := runtime.New(reg, runtime.Options{})
	bridge.Install(rt, bridge.Options{})

	code := `const [x, y] = await Promise.all([tools.math_add({a: 1, b: 2}), tools.math_add({a: 3, b: 4})])
console.log("sums", x, y)
return {total: x + y}`
	args, _ := json.Marshal(map[string]string{"code": code})
	// Executed like any call: the model's raw argument string, its call id, its
	// scope, and where its nested events go.
	r := rt.Execute(context.Background(), runtime.Request{CallID: "c1", Name: registry.RunCode, Arguments: string(args), Scope: "agent", Run: runtime.RunOptions{Events: printSink{}}})
	fmt.Println(r.Value())
	fmt.Println(r.Content()[0].Text)
	// Unordered output:
	// start c1:code:1 math_add {"a":1,"b":2}
	// start c1:code:2 math_add {"a":3,"b":4}
	// end   c1:code:1 error: false
	// end   c1:code:2 error: false
	// {"logs":["sums 3 7"],"result":{"total":10}}
	// sums 3 7
	//
	// {
	//   "total": 10
	// }
}
