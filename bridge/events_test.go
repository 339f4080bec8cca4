package bridge_test

import (
	"context"
	"errors"
	"testing"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/session"
)

type waitSink struct {
	wait  func(context.Context) error
	calls *[]string
	name  string
}

func (s waitSink) DispatchStarted(context.Context, session.CodeDispatchStart) func(context.Context) error {
	if s.wait == nil {
		return nil
	}
	return func(ctx context.Context) error {
		*s.calls = append(*s.calls, s.name)
		return s.wait(ctx)
	}
}

func (waitSink) DispatchSettled(context.Context, session.CodeDispatch) {}

// A tee's durability wait waits for every sink's, in order, and reports the
// first failure; with no sink to wait for there is nothing to wait for.
func TestTeeWaitsForEverySink(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	fail := func(err error) func(context.Context) error { return func(context.Context) error { return err } }
	for _, tc := range []struct {
		name  string
		waits []func(context.Context) error
		want  error
		calls string
	}{
		{"none", []func(context.Context) error{nil, nil}, nil, ""},
		{"one", []func(context.Context) error{nil, fail(errA)}, errA, "s1"},
		{"two", []func(context.Context) error{fail(nil), nil, fail(errB)}, errB, "s0s2"},
		{"first failure wins", []func(context.Context) error{fail(errA), fail(errB)}, errA, "s0s1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []string
			var sinks []bridge.EventSink
			for i, w := range tc.waits {
				sinks = append(sinks, waitSink{wait: w, calls: &calls, name: "s" + string(rune('0'+i))})
			}
			durable := bridge.Tee(sinks...).DispatchStarted(context.Background(), session.CodeDispatchStart{})
			if tc.calls == "" {
				if durable != nil {
					t.Fatal("a wait with nothing to wait for")
				}
				return
			}
			if err := durable(context.Background()); err != tc.want {
				t.Fatalf("wait: %v, want %v", err, tc.want)
			}
			got := ""
			for _, c := range calls {
				got += c
			}
			if got != tc.calls {
				t.Fatalf("waited for %q, want %q", got, tc.calls)
			}
		})
	}
}
