package bridge

import (
	"context"
	"testing"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/session"
)

type countingSink struct{ starts, ends int }

func (s *countingSink) DispatchStarted(context.Context, session.CodeDispatchStart) func(context.Context) error {
	s.starts++
	return nil
}
func (s *countingSink) DispatchSettled(context.Context, session.CodeDispatch) { s.ends++ }

// A binding called after the run was cancelled is rejected at once and
// dispatches nothing: no event, no body.
func TestCallAfterCancellationDispatchesNothing(t *testing.T) {
	reg := registry.New()
	ran := false
	tool := registry.MustDefine(registry.Definition{Name: "t", Output: &schema.Node{Type: "json"}, Behavior: registry.Behavior{
		Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { ran = true; return 1, nil },
	}})
	if _, err := reg.Register(registry.Global, tool); err != nil {
		t.Fatal(err)
	}
	rt := runtime.New(reg, runtime.Options{})
	b := New(rt, Options{})
	var host *run
	outer := registry.MustDefine(registry.Definition{Name: "outer", Output: &schema.Node{Type: "json"}, Behavior: registry.Behavior{
		Execute: func(ctx context.Context, exec registry.Exec, _ frozen.Value) (any, error) {
			sink := &countingSink{}
			view, err := reg.View(registry.Global)
			if err != nil {
				t.Fatal(err)
			}
			cctx, cancel := context.WithCancel(ctx)
			host = b.newRun(cctx, &runtime.Nesting{Exec: exec, View: view, Run: runtime.RunOptions{Events: sink}})
			cancel()
			var got sandbox.Settlement
			host.Call(sandbox.Call{Seq: 1, Name: "t", Args: []byte(`{}`)}, func(s sandbox.Settlement) { got = s })
			host.settle()
			if got.Err == nil || sink.starts+sink.ends != 0 || ran {
				t.Errorf("settlement %+v, events %d, body ran %v", got, sink.starts+sink.ends, ran)
			}
			return 1, nil
		},
	}})
	if _, err := reg.Register(registry.Global, outer); err != nil {
		t.Fatal(err)
	}
	if r := rt.Execute(context.Background(), runtime.Request{Name: "outer"}); r.IsError() {
		t.Fatal(r.Error())
	}
}
