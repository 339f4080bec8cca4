package bridge

import (
	"context"

	"github.com/codemode/codemode/session"
)

// EventSink receives the nested dispatch events of run_code programs, in
// the log's own payload types: the caller of a run_code call passes one as
// its runtime.Request.Run.Events. The agent loop supplies one that queues them
// for the session log without waiting; calls for one run arrive in order per
// sub-call (start before settlement) and may come from several goroutines at
// once.
type EventSink interface {
	// DispatchStarted logs a sub-call entering the pipeline and returns at
	// once. The function it returns (nil: nothing to wait for) waits until
	// the event is durable: the bridge waits for it before running a
	// sub-call whose tool may have effects (not Hints.ReadOnly), so the log
	// never loses the record of an effect that started. An error means the
	// event could not be logged; the call then does not run.
	DispatchStarted(ctx context.Context, ev session.CodeDispatchStart) (durable func(context.Context) error)
	// DispatchSettled logs a sub-call's settlement; it need not wait.
	DispatchSettled(ctx context.Context, ev session.CodeDispatch)
}

// NoticeSink is an EventSink that also logs what sub-calls report while they
// run (an upstream MCP server's progress and log notifications). Noticed
// must not block.
type NoticeSink interface {
	EventSink
	Noticed(ctx context.Context, n session.ToolNotice)
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

func (t tee) Noticed(ctx context.Context, n session.ToolNotice) {
	for _, s := range t {
		if ns, ok := s.(NoticeSink); ok {
			ns.Noticed(ctx, n)
		}
	}
}

func (t tee) DispatchStarted(ctx context.Context, ev session.CodeDispatchStart) func(context.Context) error {
	var one func(context.Context) error // the only wait, while there is one
	var waits []func(context.Context) error
	for _, s := range t {
		switch w := s.DispatchStarted(ctx, ev); {
		case w == nil:
		case one == nil && waits == nil:
			one = w
		default:
			if waits == nil {
				waits, one = []func(context.Context) error{one}, nil
			}
			waits = append(waits, w)
		}
	}
	if waits == nil {
		return one // nil when nothing to wait for
	}
	return func(ctx context.Context) error {
		var first error
		for _, w := range waits {
			if err := w(ctx); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
}

func (t tee) DispatchSettled(ctx context.Context, ev session.CodeDispatch) {
	for _, s := range t {
		s.DispatchSettled(ctx, ev)
	}
}

// Suspended implements SuspendSink: the suspension goes to the sinks that
// log one, and waits until each has it durable.
func (t tee) Suspended(ctx context.Context, ev session.CodeSuspended) error {
	var first error
	for _, s := range t {
		if ss, ok := s.(SuspendSink); ok {
			if err := ss.Suspended(ctx, ev); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}
