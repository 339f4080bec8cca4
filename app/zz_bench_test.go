package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/dop251/goja"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/runtime"
)

// These benchmarks are the end-to-end figures of BENCHMARKS.md, each beside
// its floor; go run ./cmd/benchtable prints them as one table with the targets.

// benchApp is an App as `codemode serve` builds it, on store ("sqlite"
// for a file in a temporary directory, or "memory"), with the demo tools.
func benchApp(b *testing.B, store, isolation string, demo bool) (*app.App, error) {
	b.Helper()
	cfg := config.Default()
	cfg.Isolation = isolation
	cfg.Store = "memory://"
	if store == "sqlite" {
		cfg.Store = "sqlite://" + filepath.Join(b.TempDir(), "bench.db")
	}
	if !demo {
		off := false
		cfg.Demo = &off
	}
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, app.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	b.Cleanup(func() { a.Close() })
	return a, nil
}

// benchRun runs code with App.Run in a new session per op (as POST /v1/run
// does) and checks the program's result.
func benchRun(b *testing.B, a *app.App, code, want string) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := a.Run(ctx, app.RunRequest{Code: code, Description: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		var v struct{ Result json.RawMessage }
		if res.IsError || json.Unmarshal(res.Value, &v) != nil || string(v.Result) != want {
			b.Fatalf("run %q: %s %+v", code, res.Value, res.Error)
		}
	}
}

// BenchmarkRun is a trivial program end to end through App.Run: pipeline,
// sandbox and the session log, on SQLite (the default store) and in
// memory, in-process and (when this build has it) with process isolation.
// The floor is a new goja runtime running a precompiled trivial async
// function. Target: inproc/sqlite ≤ 100 µs.
func BenchmarkRun(b *testing.B) {
	for _, store := range []string{"sqlite", "memory"} {
		for _, iso := range []string{"inproc", "process"} {
			b.Run(fmt.Sprintf("isolation=%s/store=%s", iso, store), func(b *testing.B) {
				a, err := benchApp(b, store, iso, true)
				if err != nil {
					b.Skipf("isolation %s: %v", iso, err)
				}
				benchRun(b, a, "return 1", "1")
			})
		}
	}
	b.Run("floor=goja", func(b *testing.B) {
		prg := goja.MustCompile("floor.js", "(async function () { return 1 })()", false)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := goja.New().RunProgram(prg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNestedCall measures programs of 1 and 11 SDK calls through
// App.Run; one nested call (bridge + pipeline + log) costs the difference
// ÷ 10. The floor is the same tool called directly through the pipeline
// (runtime.Execute, no log). Target: per call ≤ floor + 15 µs.
func BenchmarkNestedCall(b *testing.B) {
	const (
		one    = "return (await tools.math_add({a: 1, b: 2})).sum"
		eleven = "let s = 0; for (let i = 0; i < 11; i++) s += (await tools.math_add({a: i, b: 2})).sum; return s"
	)
	for _, store := range []string{"sqlite", "memory"} {
		b.Run("store="+store, func(b *testing.B) {
			a, err := benchApp(b, store, "inproc", true)
			if err != nil {
				b.Fatal(err)
			}
			b.Run("program=1call", func(b *testing.B) { benchRun(b, a, one, "3") })
			b.Run("program=11calls", func(b *testing.B) { benchRun(b, a, eleven, "77") })
		})
	}
	b.Run("floor=direct-execute", func(b *testing.B) {
		a, err := benchApp(b, "memory", "inproc", true)
		if err != nil {
			b.Fatal(err)
		}
		req := runtime.Request{CallID: "call_direct", Name: "math_add", Arguments: `{"a":1,"b":2}`, Scope: config.DefaultScope}
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if r := a.Runtime.Execute(ctx, req); r.IsError() {
				b.Fatal(r.Error().Message)
			}
		}
	})
}

// BenchmarkSDKSetup is the per-run cost of the SDK: a trivial run_code call
// through the App's pipeline (no session log) with 10, 100 and 1,000 tools
// in scope. Target: tools=1000 ≤ 1.2 × tools=10.
func BenchmarkSDKSetup(b *testing.B) {
	closed := false
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			a, err := benchApp(b, "memory", "inproc", false)
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				t, err := registry.Define(registry.Definition{
					Name:        fmt.Sprintf("tool_%04d", i),
					Description: "Adds two numbers.",
					Parameters: &schema.Node{Type: "object", Required: []string{"a", "b"}, Properties: map[string]*schema.Node{
						"a": {Type: "number"}, "b": {Type: "number"},
					}},
					Output: &schema.Node{Type: "object", AdditionalProperties: &closed, Properties: map[string]*schema.Node{"sum": {Type: "number"}}},
					Behavior: registry.Behavior{
						Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return map[string]any{"sum": 0}, nil },
					},
				})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := a.Registry.Register(config.DefaultScope, t); err != nil {
					b.Fatal(err)
				}
			}
			args, _ := json.Marshal(map[string]string{"code": "return 1", "description": "bench"})
			req := runtime.Request{CallID: "call_bench", Name: registry.RunCode, Arguments: string(args), Scope: config.DefaultScope}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if r := a.Runtime.Execute(ctx, req); r.IsError() {
					b.Fatal(r.Error().Message)
				}
			}
		})
	}
}
