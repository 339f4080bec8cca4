package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/runtime"
)

// Programs every run figure uses (the Node peer runs the same two bodies).
const (
	trivialProgram = "return 1"
	oneCall        = "return (await tools.math_add({a: 1, b: 2})).sum"
	elevenCalls    = "let s = 0; for (let i = 0; i < 11; i++) s += (await tools.math_add({a: i, b: 2})).sum; return s"
	twentyCalls    = "let s = 0; for (let i = 0; i < 20; i++) s += (await tools.math_add({a: i, b: 2})).sum; return s"
)

// Values the programs must return.
const (
	wantTrivial = "1"
	wantOne     = "3"
	wantEleven  = "77"  // Σ(i+2), i < 11
	wantTwenty  = "230" // Σ(i+2), i < 20
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// Isolation settings (config's isolation).
const (
	inproc  = "inproc"
	process = "process"
)

// appConfig is config.Default with the given store and isolation (always
// set: the default may change); demo tools on unless demo is false.
func appConfig(store, isolation string, demo bool) config.Config {
	cfg := config.Default()
	cfg.Store = store
	cfg.Isolation = isolation
	if !demo {
		off := false
		cfg.Demo = &off
	}
	return cfg
}

// newApp assembles an App as `codemode serve` would, logging nowhere.
func newApp(ctx context.Context, cfg config.Config) (*app.App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return app.New(ctx, cfg, app.Options{Logger: discard})
}

// runOp is one App.Run of code, checked for its value. Each run opens a
// new session, as POST /v1/run without session_id does.
func runOp(ctx context.Context, a *app.App, code, want string) op {
	return func() error {
		res, err := a.Run(ctx, app.RunRequest{Code: code, Description: "bench"})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("run %q failed: %s", code, res.Error.Message)
		}
		var v struct{ Result json.RawMessage }
		if err := json.Unmarshal(res.Value, &v); err != nil || string(v.Result) != want {
			return fmt.Errorf("run %q returned %s, want result %s", code, res.Value, want)
		}
		return nil
	}
}

// executeOp is one runtime.Execute of req that must succeed.
func executeOp(ctx context.Context, rt *runtime.Runtime, req runtime.Request) op {
	return func() error {
		if r := rt.Execute(ctx, req); r.IsError() {
			return fmt.Errorf("%s: %s", req.Name, r.Error().Message)
		}
		return nil
	}
}

// runCodeRequest is a model's run_code call of code in scope.
func runCodeRequest(scope, code string) runtime.Request {
	args, _ := json.Marshal(map[string]string{"code": code, "description": "bench"})
	return runtime.Request{CallID: "call_bench", Name: registry.RunCode, Arguments: string(args), Scope: scope}
}

// registerTools adds n concurrency-safe tools tool_0000… that add two
// numbers to scope.
func registerTools(reg *registry.Registry, scope string, n int) error {
	closed := false
	for i := range n {
		t, err := registry.Define(registry.Definition{
			Name:        fmt.Sprintf("tool_%04d", i),
			Description: "Adds two numbers.",
			Parameters: &schema.Node{Type: "object", Required: []string{"a", "b"}, Properties: map[string]*schema.Node{
				"a": {Type: "number"}, "b": {Type: "number"},
			}},
			Output: &schema.Node{Type: "object", AdditionalProperties: &closed, Properties: map[string]*schema.Node{"sum": {Type: "number"}}},
			Behavior: registry.Behavior{
				IsConcurrencySafe: func(frozen.Value) bool { return true },
				Execute: func(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) {
					var in struct{ A, B float64 }
					if err := args.Unmarshal(&in); err != nil {
						return nil, err
					}
					return map[string]any{"sum": in.A + in.B}, nil
				},
			},
		})
		if err != nil {
			return err
		}
		if _, err := reg.Register(scope, t); err != nil {
			return err
		}
	}
	return nil
}
