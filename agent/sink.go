package agent

import (
	"context"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/session"
)

// Sink returns the bridge.EventSink that appends a run_code program's nested
// dispatch events to the session: tool/code-dispatch-start when an SDK call
// enters the pipeline and tool/code-dispatch when it settles. It is for
// components that run run_code themselves, outside a step: each event is
// durable when its method returns. (A step installs a sink of its own that
// queues the events in the step's group commits.) The sink cannot report
// failures to the bridge beyond a failed write-ahead: a failed append is
// logged with Options.Logger and the program goes on.
func (a *Agent) Sink(sessionID string) bridge.EventSink {
	return &sink{a: a, w: newLogWriter(a.store, sessionID, nil, nil, nil), sync: true}
}

// sink writes nested events through a step's log writer.
type sink struct {
	a    *Agent
	w    *logWriter
	sync bool // wait for every event (outside a step)
}

var _ bridge.EventSink = (*sink)(nil)

// DispatchStarted implements bridge.EventSink: the event is queued, and the
// function returned (which the bridge calls before the body of a tool that
// may have effects: write-ahead) submits it at once and waits until it is
// durable.
func (s *sink) DispatchStarted(ctx context.Context, ev session.CodeDispatchStart) func(context.Context) error {
	if !s.write(ctx, ev.SubCallID, session.TypeCodeDispatchStart, ev) {
		return nil
	}
	return func(ctx context.Context) error {
		if s.sync {
			return nil // written already
		}
		s.w.submit(ctx)
		return s.w.durable(ctx)
	}
}

// DispatchSettled implements bridge.EventSink: the event is queued.
func (s *sink) DispatchSettled(ctx context.Context, ev session.CodeDispatch) {
	s.write(ctx, ev.SubCallID, session.TypeCodeDispatch, ev)
}

// write queues one event and reports whether it could be made. In a step
// it lingers (logWriter.holdLinger), so a short run's nested events share
// the commit of its result; outside a step it is written and waited for.
// Nested events are logged even when the run is being cancelled: they must
// land inside the open turn.
func (s *sink) write(ctx context.Context, subCallID, typ string, payload any) bool {
	events, err := entriesEvents(typ, entry{typ, payload})
	if err != nil {
		s.a.opts.Logger.Error("agent: nested event not logged", "session", s.w.sessionID, "sub_call_id", subCallID, "type", typ, "err", err)
		return false
	}
	if !s.sync {
		s.w.holdLinger(events...)
		return true
	}
	if _, err := s.w.submit(ctx, events...).Wait(context.WithoutCancel(ctx)); err != nil {
		s.a.opts.Logger.Error("agent: nested event not logged", "session", s.w.sessionID, "sub_call_id", subCallID, "type", typ, "err", err)
	}
	return true
}

var _ bridge.NoticeSink = (*sink)(nil)

// Noticed implements bridge.NoticeSink: a sub-call's progress or log line is
// queued as a tool/notice event, so live streams show it while the call
// runs.
func (s *sink) Noticed(ctx context.Context, n session.ToolNotice) {
	s.write(ctx, n.CallID, session.TypeToolNotice, n)
}

var _ bridge.SuspendSink = (*sink)(nil)

// Suspended implements bridge.SuspendSink: tool/code-suspended is written
// and waited for; the run's tool/call stays open until it resumes.
func (s *sink) Suspended(ctx context.Context, ev session.CodeSuspended) error {
	events, err := entriesEvents("tool/code-suspended", entry{session.TypeCodeSuspended, ev})
	if err != nil {
		return err
	}
	_, err = s.w.commit(context.WithoutCancel(ctx), events...)
	return err
}
