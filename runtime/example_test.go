package runtime_test

import (
	"context"
	"fmt"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/runtime"
)

func ExampleRuntime_Execute() {
	reg := registry.New()
	reg.Register(registry.Global, registry.MustDefine(registry.Definition{
		Name:       "double",
		Parameters: &schema.Node{Type: "object", Required: []string{"n"}, Properties: map[string]*schema.Node{"n": {Type: "number"}}},
		Output:     &schema.Node{Type: "number"},
		Behavior: registry.Behavior{Execute: func(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) {
			var in struct{ N float64 }
			err := args.Unmarshal(&in)
			return in.N * 2, err
		}},
	}))
	rt := runtime.New(reg, runtime.Options{})
	// Pre-policy may allow, deny or ask; it cannot rewrite the arguments.
	rt.AddPrePolicy(registry.Global, func(_ context.Context, c runtime.Call) (runtime.Decision, error) {
		if c.Args.String() == `{"n":13}` {
			return runtime.Deny("13 is unlucky"), nil
		}
		return runtime.Allow(), nil
	})
	// Post-policy may replace the content or the value, never both.
	rt.AddPostPolicy(registry.Global, func(_ context.Context, _ runtime.Call, v runtime.PostView) (runtime.PostDecision, error) {
		if v.IsError {
			return runtime.Accept(), nil
		}
		return runtime.ReplaceContent([]registry.ContentBlock{registry.Text("doubled: " + v.Value.String())}), nil
	})
	for _, args := range []string{`{"n":21}`, `{"n":13}`, `{"n":"x"}`, `not json`} {
		r := rt.Execute(context.Background(), runtime.Request{Name: "double", Arguments: args})
		if r.IsError() {
			fmt.Println(r.Code(), "-", r.Error().Message)
			continue
		}
		fmt.Println(r.Value(), "-", r.Content()[0].Text)
	}
	// Output:
	// 42 - doubled: 42
	// DENIED - 13 is unlucky
	// INVALID_ARGS - invalid arguments for double: at /n: expected number, got string
	// INVALID_ARGS - arguments for double are not valid JSON at line 1, column 2: invalid character 'o' in literal null (expecting 'u')
}

// A batch runs sibling calls in submission order: safe calls overlap, an
// exclusive one runs alone, and (without InOrder) each settles as soon as
// its own body ends.
func ExampleBatch() {
	reg := registry.New()
	for _, name := range []string{"read", "write"} {
		reg.Register(registry.Global, registry.MustDefine(registry.Definition{
			Name:   name,
			Output: &schema.Node{Type: "string"},
			Behavior: registry.Behavior{
				IsConcurrencySafe: func(frozen.Value) bool { return name == "read" },
				Execute:           func(context.Context, registry.Exec, frozen.Value) (any, error) { return name, nil },
			},
		}))
	}
	rt := runtime.New(reg, runtime.Options{})
	batch := rt.NewBatch(context.Background(), runtime.BatchOptions{Window: 4})
	for _, name := range []string{"read", "read", "write", "read"} {
		batch.Go(runtime.Request{Name: name}, runtime.Hooks{
			Start: func(n int, c runtime.Call, safe bool) { fmt.Printf("call %d %s starts (safe: %v)\n", n, c.Name, safe) },
		})
		batch.Wait() // one at a time, so the example's output is stable
	}
	batch.Close()
	// Output:
	// call 1 read starts (safe: true)
	// call 2 read starts (safe: true)
	// call 3 write starts (safe: false)
	// call 4 read starts (safe: true)
}
