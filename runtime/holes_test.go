package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
)

// Each test here pins a rule a single-line change of the pipeline broke
// without any other test noticing.

func contextTexts(r *Result) string {
	var out []string
	for _, c := range r.Contexts() {
		out = append(out, c.Text)
	}
	return strings.Join(out, ",")
}

// A result is frozen all the way down: an observer writing into a context's
// content changes nothing the next observer or the caller sees.
func TestObserversCannotChangeContexts(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(_ context.Context, exec registry.Exec, _ frozen.Value) (any, error) {
		exec.Defer(registry.Context{Source: "tool", Text: "note", Content: []registry.ContentBlock{registry.Text("original")}})
		return map[string]any{"sum": 1}, nil
	}}))
	rt.AddObserver(func(_ Call, r *Result) {
		cs := r.Contexts()
		cs[0].Content[0].Text = "mutated"
		cs[0].Text = "mutated"
	})
	var second string
	rt.AddObserver(func(_ Call, r *Result) { second = r.Contexts()[0].Content[0].Text })
	r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
	if second != "original" || r.Contexts()[0].Content[0].Text != "original" || r.Contexts()[0].Text != "note" {
		t.Fatalf("an observer changed the frozen result: next observer saw %q, caller %+v", second, r.Contexts())
	}
}

// Guards compose monotonically in both orders: a veto followed by an
// abstention is still a denial.
func TestVetoThenAbstainDenies(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
	rt.AddGuard(registry.Global, func(context.Context, Call) string { return "first vetoes" })
	rt.AddGuard(registry.Global, func(context.Context, Call) string { return "" })
	r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
	wantCode(t, r, registry.CodeDenied)
	if r.Error().Message != "first vetoes" || r.BodyStarted() {
		t.Fatalf("%+v started=%v", r.Error(), r.BodyStarted())
	}
}

// A success that lands after the caller cancelled is ABORTED, and keeps the
// contexts the wrapper supplied as well as the tool's.
func TestLateSuccessKeepsWrapperContexts(t *testing.T) {
	reg, rt := newRT(t)
	ctx, cancel := context.WithCancel(context.Background())
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(_ context.Context, exec registry.Exec, _ frozen.Value) (any, error) {
		exec.DeferContext("from tool")
		cancel()
		return map[string]any{"sum": 3}, nil // ignores the cancellation
	}}))
	addWrapperContext(rt)
	r := rt.Execute(ctx, Request{Name: "add", Arguments: `{"a":1,"b":2}`})
	wantCode(t, r, registry.CodeAborted)
	if got := contextTexts(r); got != "from tool,from wrapper" {
		t.Fatalf("contexts %q", got)
	}
}

// A block keeps only its own contexts: not the tool's, the wrapper's or an
// earlier post-policy's.
func TestBlockKeepsOnlyItsOwnContexts(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(_ context.Context, exec registry.Exec, _ frozen.Value) (any, error) {
		exec.DeferContext("from tool")
		exec.ConcludeTurn()
		return map[string]any{"sum": 3}, nil
	}}))
	addWrapperContext(rt)
	rt.AddPostPolicy(registry.Global, func(context.Context, Call, PostView) (PostDecision, error) {
		return Accept(registry.Context{Source: "post", Text: "earlier post"}), nil
	})
	rt.AddPostPolicy(registry.Global, func(context.Context, Call, PostView) (PostDecision, error) {
		return Block("too big", registry.Context{Source: "post", Text: "block note"}), nil
	})
	r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
	wantCode(t, r, registry.CodeDenied)
	if got := contextTexts(r); got != "block note" || r.ConcludesTurn() || text(r) != "too big" || !r.Value().IsZero() {
		t.Fatalf("contexts %q concludes %v content %q value %s", got, r.ConcludesTurn(), text(r), r.Value())
	}
}

// The error result of a panicking finalizer carries no value and no
// presentationMeta.
func TestPanickingFinalizerDropsValueAndMeta(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{
		PresentationMeta: func(_, _ frozen.Value) (any, error) { return map[string]any{"diff": "x"}, nil },
		FinalizeContent:  func(frozen.Value, registry.Final) []registry.ContentBlock { panic("finalizer bug") },
	}))
	r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
	wantCode(t, r, registry.CodeInternal)
	if !r.Value().IsZero() || !r.Meta().IsZero() {
		t.Fatalf("value %s meta %s survived a failed finalizer", r.Value(), r.Meta())
	}
}

// Post-policy cannot replace the value of a failed result.
func TestValueOfAFailureCannotBeReplaced(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
		return nil, registry.Errorf(registry.CodeToolFailed, "broke")
	}}))
	rt.AddPostPolicy(registry.Global, func(context.Context, Call, PostView) (PostDecision, error) {
		return ReplaceValue(map[string]any{"sum": 1}), nil
	})
	r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
	wantCode(t, r, registry.CodeInternal)
	if !r.Value().IsZero() || !strings.Contains(r.Error().Message, "cannot replace the value of a failed result") {
		t.Fatalf("%+v value %s", r.Error(), r.Value())
	}
}
