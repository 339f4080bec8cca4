package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/codemode/codemode/sandbox"
)

// adder is a Host with one tool, math_add, answered on another goroutine as a real host would.
type adder struct{}

func (adder) Has(name string) bool { return name == "math_add" }
func (adder) Names() []string      { return []string{"math_add"} }
func (adder) Call(c sandbox.Call, settle func(sandbox.Settlement)) {
	go func() {
		var args struct{ A, B float64 }
		if err := json.Unmarshal(c.Args, &args); err != nil {
			settle(sandbox.Settlement{Err: &sandbox.CallError{Message: err.Error()}})
			return
		}
		settle(sandbox.Settlement{Value: []byte(fmt.Sprintf(`{"sum":%g}`, args.A+args.B))})
	}()
}

func ExampleRun() {
	p, err := sandbox.Compile(`
		const r: {sum: number} = await tools.math_add({a: 2, b: 3});
		console.log("sum is", r.sum);
		try { await tools.math_add({a: 1n}) } catch (e) { console.log(e.name, e.message) }
		return {sum: r.sum};`, sandbox.TypeScript)
	if err != nil {
		fmt.Println(err)
		return
	}
	res := sandbox.Run(context.Background(), p, adder{}, sandbox.Options{})
	fmt.Println(res.Logs)
	fmt.Println(string(res.Value), res.Err)
	// Output:
	// [sum is 5 ToolCallError argument at .a is a BigInt: JSON has no BigInt (pass String(n), or Number(n) when it fits)]
	// {"sum":5} <nil>
}

func ExampleCompile() {
	_, err := sandbox.Compile("const a = 1\nconst b = )", sandbox.JavaScript)
	fmt.Println(err)
	// Output:
	// syntax: Unexpected token ) (at line 2:11)
}
