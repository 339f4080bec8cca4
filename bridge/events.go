package bridge

import (
	"context"

	"github.com/codemode/codemode/session"
)

// EventSink receives the nested dispatch events of run_code programs, in
// the log's own payload types. The
// agent loop supplies one that appends them to the session log; calls for
// one run arrive in order per sub-call (start before settlement) and may
// come from several goroutines at once.
type EventSink interface {
	DispatchStarted(ctx context.Context, ev session.CodeDispatchStart)
	DispatchSettled(ctx context.Context, ev session.CodeDispatch)
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

func (t tee) DispatchStarted(ctx context.Context, ev session.CodeDispatchStart) {
	for _, s := range t {
		s.DispatchStarted(ctx, ev)
	}
}

func (t tee) DispatchSettled(ctx context.Context, ev session.CodeDispatch) {
	for _, s := range t {
		s.DispatchSettled(ctx, ev)
	}
}
