package agent

import (
	"context"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/registry"
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
func (s *sink) DispatchStarted(ctx context.Context, ev bridge.DispatchStart) {
	s.append(ctx, ev.SubCallID, entry{session.TypeCodeDispatchStart, session.CodeDispatchStart{
		RootCallID: ev.RootCallID, ParentCallID: ev.ParentCallID, SubCallID: ev.SubCallID,
		Name: ev.Name, Arguments: ev.Arguments,
	}})
}

// DispatchSettled implements bridge.EventSink.
func (s *sink) DispatchSettled(ctx context.Context, ev bridge.Dispatch) {
	if ev.Content == nil {
		ev.Content = []registry.ContentBlock{}
	}
	s.append(ctx, ev.SubCallID, entry{session.TypeCodeDispatch, session.CodeDispatch{
		RootCallID: ev.RootCallID, ParentCallID: ev.ParentCallID, SubCallID: ev.SubCallID,
		Name: ev.Name, Arguments: ev.Arguments,
		IsError: ev.IsError, Content: ev.Content, Error: errorInfo(ev.Error),
		StartedAt: ev.StartedAt, EndedAt: ev.EndedAt,
	}})
}

func (s *sink) append(ctx context.Context, subCallID string, en entry) {
	// Nested events are logged even when the run is being cancelled: they
	// must land inside the open turn.
	if _, err := s.a.appendEvents(context.WithoutCancel(ctx), s.sessionID, en.typ, en); err != nil {
		s.a.opts.Logger.Error("agent: nested event not logged", "session", s.sessionID, "sub_call_id", subCallID, "type", en.typ, "err", err)
	}
}
