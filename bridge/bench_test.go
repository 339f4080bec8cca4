package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/dop251/goja"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/worker"
)

func benchEnv(b *testing.B, tools int) *runtime.Runtime {
	return benchEnvWith(b, tools, bridge.Options{})
}

func benchEnvWith(b *testing.B, tools int, opts bridge.Options) *runtime.Runtime {
	b.Helper()
	reg, rt := newRuntime(b, opts)
	for i := range tools {
		name := fmt.Sprintf("tool_%04d", i)
		if i == 0 {
			name = "add"
		}
		t, err := registry.Define(registry.Definition{
			Name:        name,
			Description: "A tool.",
			Parameters: &schema.Node{Type: "object", Properties: map[string]*schema.Node{
				"a": {Type: "number"}, "b": {Type: "number"},
			}},
			Output: &schema.Node{Type: "json"},
			Behavior: registry.Behavior{
				IsConcurrencySafe: func(frozen.Value) bool { return true },
				Execute: func(_ context.Context, _ registry.Exec, a frozen.Value) (any, error) {
					var in struct{ A, B float64 }
					_ = a.Unmarshal(&in)
					return map[string]any{"sum": in.A + in.B}, nil
				},
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := reg.Register("s", t); err != nil {
			b.Fatal(err)
		}
	}
	return rt
}

func runArgs(code string) string {
	b, _ := json.Marshal(map[string]string{"code": code, "description": "bench"})
	return string(b)
}

// BenchmarkRunTrivial is a trivial program through the whole pipeline
// (run_code is itself a tool call), with 10 and 1,000 tools in scope; the
// floor is a fresh goja runtime running a precompiled trivial program.
func BenchmarkRunTrivial(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			rt := benchEnv(b, n)
			req := runtime.Request{CallID: "c", Name: registry.RunCode, Arguments: runArgs("return 1"), Scope: "s"}
			b.ReportAllocs()
			for b.Loop() {
				if r := rt.Execute(context.Background(), req); r.IsError() {
					b.Fatal(r.Error().Message)
				}
			}
		})
	}
	b.Run("floor=goja", func(b *testing.B) {
		prog := goja.MustCompile("", "(async function(){ return 1 })()", false)
		b.ReportAllocs()
		for b.Loop() {
			vm := goja.New()
			if _, err := vm.RunProgram(prog); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNestedCall is the cost of one SDK call (bridge + pipeline) over a
// direct runtime.Execute of the same tool: run a program making 1 call and
// one making 11, and compare the difference per call with the direct call.
func BenchmarkNestedCall(b *testing.B) {
	rt := benchEnv(b, 10)
	one := runtime.Request{Name: registry.RunCode, Arguments: runArgs("return (await tools.add({a: 1, b: 2})).sum"), Scope: "s"}
	eleven := runtime.Request{Name: registry.RunCode, Arguments: runArgs("let s = 0; for (let i = 0; i < 11; i++) s += (await tools.add({a: i, b: 2})).sum; return s"), Scope: "s"}
	b.Run("program=1call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rt.Execute(context.Background(), one)
		}
	})
	b.Run("program=11calls", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rt.Execute(context.Background(), eleven)
		}
	})
	b.Run("floor=direct-execute", func(b *testing.B) {
		req := runtime.Request{Name: "add", Arguments: `{"a":1,"b":2}`, Scope: "s", Parent: parentToken(rt)}
		b.ReportAllocs()
		for b.Loop() {
			if r := rt.Execute(context.Background(), req); r.IsError() {
				b.Fatal(r.Error().Message)
			}
		}
	})
}

// parentToken gets a real execution token to mark calls as SDK sub-calls
// (code mode admits only those).
func parentToken(rt *runtime.Runtime) runtime.Token {
	var tok runtime.Token
	rem := rt.AddObserver(func(c runtime.Call, _ *runtime.Result) { tok = c.Token })
	rt.Execute(context.Background(), runtime.Request{Name: registry.RunCode, Arguments: runArgs("return 1"), Scope: "s"})
	rem()
	return tok
}

// BenchmarkIsolation measures, in one run, the same programs through the whole pipeline in
// process and in a warm pool of worker processes: a trivial program, and programs making 1
// and 11 nested calls (one nested call costs the difference of those two over 10). The
// extra cost of isolation is process/X minus inproc/X.
func BenchmarkIsolation(b *testing.B) {
	pool, err := worker.New(worker.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	programs := []struct{ name, code, want string }{
		{"trivial", "return 1", `{"logs":[],"result":1}`},
		{"1call", "return (await tools.add({a: 1, b: 2})).sum", `{"logs":[],"result":3}`},
		{"11calls", "let s = 0; for (let i = 0; i < 11; i++) s += (await tools.add({a: i, b: 2})).sum; return s", `{"logs":[],"result":77}`},
	}
	for _, runner := range []struct {
		name string
		r    sandbox.Runner
	}{{"inproc", sandbox.InProcess{}}, {"process", pool}} {
		rt := benchEnvWith(b, 10, bridge.Options{Runner: runner.r})
		for _, p := range programs {
			req := runtime.Request{Name: registry.RunCode, Arguments: runArgs(p.code), Scope: "s"}
			run := func(b *testing.B) {
				if r := rt.Execute(context.Background(), req); r.IsError() || r.Value().String() != p.want {
					b.Fatalf("%s: %s %v", p.name, r.Value().String(), r.Error())
				}
			}
			for range 20 { // warm: workers started, programs compiled
				run(b)
			}
			b.Run(runner.name+"/"+p.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					run(b)
				}
			})
		}
	}
}
