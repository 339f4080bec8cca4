package runtime

import (
	"context"
	"testing"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
)

func addBody(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) {
	var in struct{ A, B float64 }
	if err := args.Unmarshal(&in); err != nil {
		return nil, err
	}
	return map[string]any{"sum": in.A + in.B}, nil
}

// BenchmarkExecute measures the whole pipeline for a Define'd trivial tool
// with a no-op hook mounted at every stage; BenchmarkExecute/direct is the
// floor: the same body called directly with already-parsed arguments.
func BenchmarkExecute(b *testing.B) {
	tool, err := registry.Define(registry.Definition{
		Name: "add",
		Parameters: &schema.Node{Type: "object", Required: []string{"a", "b"}, Properties: map[string]*schema.Node{
			"a": {Type: "number"}, "b": {Type: "number"},
		}},
		Output: &schema.Node{Type: "object", AdditionalProperties: ptr(false), Properties: map[string]*schema.Node{"sum": {Type: "number"}}},
		Behavior: registry.Behavior{
			Execute:         addBody,
			FinalizeContent: func(frozen.Value, registry.Final) []registry.ContentBlock { return nil },
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	reg := registry.New()
	if _, err := reg.Register(registry.Global, tool); err != nil {
		b.Fatal(err)
	}
	rt := New(reg, Options{})
	rt.AddPrePolicy(registry.Global, func(context.Context, Call) (Decision, error) { return Allow(), nil })
	rt.AddGuard(registry.Global, func(context.Context, Call) string { return "" })
	rt.AddAround(func(ctx context.Context, _ Call, next Next) Outcome { return next(ctx) })
	rt.AddPostPolicy(registry.Global, func(context.Context, Call, PostView) (PostDecision, error) { return PostDecision{}, nil })
	rt.AddObserver(func(Call, *Result) {})
	ctx := context.Background()
	req := Request{CallID: "c", Name: "add", Arguments: `{"a":2,"b":3}`}

	b.Run("pipeline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r := rt.Execute(ctx, req); r.IsError() {
				b.Fatal(r.Error().Message)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		args := frozen.MustParse(req.Arguments)
		for b.Loop() {
			if _, err := addBody(ctx, nil, args); err != nil {
				b.Fatal(err)
			}
		}
	})
}
