package registry_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
)

// stubExec is the Exec a test body sees.
type stubExec struct{ callID string }

func (e stubExec) CallID() string       { return e.callID }
func (stubExec) SessionID() string      { return "" }
func (stubExec) Scope() string          { return registry.Global }
func (stubExec) Nested() bool           { return false }
func (stubExec) IdempotencyKey() string { return "" }
func (stubExec) DeferContext(string)    {}
func (stubExec) Defer(registry.Context) {}
func (stubExec) ConcludeTurn()          {}

var _ registry.Exec = stubExec{}

func boolPtr(b bool) *bool { return &b }

// closedObject is an explicit object that rejects extra keys.
func closedObject(props map[string]*schema.Node, required ...string) *schema.Node {
	return &schema.Node{Type: "object", Properties: props, Required: required, AdditionalProperties: boolPtr(false)}
}

func str() *schema.Node  { return &schema.Node{Type: "string"} }
func intg() *schema.Node { return &schema.Node{Type: "integer"} }

// returning is a body that returns v.
func returning(v any) registry.ExecuteFunc {
	return func(context.Context, registry.Exec, frozen.Value) (any, error) { return v, nil }
}

// newTool defines a trivial tool: no parameters, a string value.
func newTool(t testing.TB, name string) *registry.Tool {
	t.Helper()
	tool, err := registry.Define(registry.Definition{
		Name:        name,
		Description: "the " + name + " tool",
		Output:      str(),
		Behavior:    registry.Behavior{Execute: returning(name)},
	})
	if err != nil {
		t.Fatalf("define %q: %v", name, err)
	}
	return tool
}

// transport is the tool installed as run_code in tests.
func transport(t testing.TB) *registry.Tool {
	t.Helper()
	tool, err := registry.DefineCodeTransport(registry.Definition{
		Name: registry.RunCode, Output: str(), Behavior: registry.Behavior{Execute: returning("code transport")},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func mustRegister(t testing.TB, r *registry.Registry, scope string, tool *registry.Tool) func() {
	t.Helper()
	un, err := r.Register(scope, tool)
	if err != nil {
		t.Fatalf("register %q in %q: %v", tool.Name(), scope, err)
	}
	return un
}

func mustScope(t testing.TB, r *registry.Registry, name, parent string, mode registry.Mode) {
	t.Helper()
	if err := r.CreateScope(name, parent, mode); err != nil {
		t.Fatalf("create scope %q: %v", name, err)
	}
}

func mustRestrict(t testing.TB, r *registry.Registry, scope string, f registry.Filter) func() {
	t.Helper()
	remove, err := r.Restrict(scope, f)
	if err != nil {
		t.Fatalf("restrict %q with %+v: %v", scope, f, err)
	}
	return remove
}

func mustView(t testing.TB, r *registry.Registry, scope string) *registry.View {
	t.Helper()
	v, err := r.View(scope)
	if err != nil {
		t.Fatalf("view %q: %v", scope, err)
	}
	return v
}

func toolNames(tools []*registry.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name()
	}
	return out
}

// visible lists the SDK tool names of a scope's current view.
func visible(t testing.TB, r *registry.Registry, scope string) []string {
	t.Helper()
	return toolNames(mustView(t, r, scope).SDKTools())
}

func wantNames(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got == nil {
		got = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

// asError returns err as *registry.Error or fails.
func asError(t testing.TB, err error, code registry.Code) *registry.Error {
	t.Helper()
	var e *registry.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *registry.Error", err, err)
	}
	if e.Code != code {
		t.Fatalf("code %s, want %s (%v)", e.Code, code, err)
	}
	return e
}
