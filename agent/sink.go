package agent

import (
	"context"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/session"
)

// Sink returns the bridge.EventSink that appends a run_code program's nested
// dispatch events to the session: tool/code-dispatch-start when an SDK call
// enters the pipeline and tool/code-dispatch when it settles. Step installs
// it on every call's context; it is exported for components that run
// run_code themselves. The sink cannot report failures to the bridge: a
// failed append is logged with Options.Logger and the program goes on.
func (a *Agent) Sink(sessionID string) bridge.EventSink {
	return &sink{a: a, sessionID: sessionID}
}

type sink struct {
	a         *Agent
	sessionID string
}

var _ bridge.EventSink = (*sink)(nil)

// DispatchStarted implements bridge.EventSink.
func (s *sink) DispatchStarted(ctx context.Context, ev session.CodeDispatchStart) {
	s.append(ctx, ev.SubCallID, entry{session.TypeCodeDispatchStart, ev})
}

// DispatchSettled implements bridge.EventSink.
func (s *sink) DispatchSettled(ctx context.Context, ev session.CodeDispatch) {
	s.append(ctx, ev.SubCallID, entry{session.TypeCodeDispatch, ev})
}

func (s *sink) append(ctx context.Context, subCallID string, en entry) {
	// Nested events are logged even when the run is being cancelled: they
	// must land inside the open turn.
	if _, err := s.a.appendEvents(context.WithoutCancel(ctx), s.sessionID, en.typ, en); err != nil {
		s.a.opts.Logger.Error("agent: nested event not logged", "session", s.sessionID, "sub_call_id", subCallID, "type", en.typ, "err", err)
	}
}
