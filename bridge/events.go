package bridge

import (
	"context"
	"encoding/json"
	"time"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
)

// DispatchStart is logged when a sub-call enters the pipeline.
type DispatchStart struct {
	RootCallID   string
	ParentCallID string
	SubCallID    string
	Name         string
	Arguments    json.RawMessage
}

// Dispatch is logged when a sub-call settles.
type Dispatch struct {
	DispatchStart
	IsError   bool
	Content   []registry.ContentBlock
	Error     *runtime.ErrorInfo
	StartedAt time.Time
	EndedAt   time.Time
}

// EventSink receives the nested dispatch events of run_code programs. The
// agent loop supplies one that appends them to the session log; calls for
// one run arrive in order per sub-call (start before settlement) and may
// come from several goroutines at once.
type EventSink interface {
	DispatchStarted(ctx context.Context, ev DispatchStart)
	DispatchSettled(ctx context.Context, ev Dispatch)
}

type sinkKey struct{}

// WithEventSink returns a context whose run_code executions log their
// nested events to sink. Without one, programs still run and nothing is
// logged.
func WithEventSink(ctx context.Context, sink EventSink) context.Context {
	return context.WithValue(ctx, sinkKey{}, sink)
}

func sinkFrom(ctx context.Context) EventSink {
	s, _ := ctx.Value(sinkKey{}).(EventSink)
	return s
}

// Tee returns a sink that forwards every event to each non-nil sink in order.
func Tee(sinks ...EventSink) EventSink {
	var live []EventSink
	for _, s := range sinks {
		if s != nil {
			live = append(live, s)
		}
	}
	return tee(live)
}

type tee []EventSink

func (t tee) DispatchStarted(ctx context.Context, ev DispatchStart) {
	for _, s := range t {
		s.DispatchStarted(ctx, ev)
	}
}

func (t tee) DispatchSettled(ctx context.Context, ev Dispatch) {
	for _, s := range t {
		s.DispatchSettled(ctx, ev)
	}
}
