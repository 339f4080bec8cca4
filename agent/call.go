package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/codemode/codemode/session"
)

// CallState is what the log holds of one top-level call: its request, its
// result once it has one, and, for a run_code call, its program's settled
// SDK calls in the order they settled.
type CallState struct {
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// State is "open" while the call has no result in the log, else
	// "settled".
	State  string          `json:"state"`
	Result *session.Result `json:"result,omitempty"`
	// Calls are the program's settled SDK calls (run_code only).
	Calls []session.CodeDispatch `json:"calls"`
	// Seq is the last event read: a caller waiting for the result waits
	// for events after it.
	Seq int64 `json:"-"`
}

// Call states.
const (
	CallOpen    = "open"
	CallSettled = "settled"
)

// Call reads the state of the top-level call callID from the session's log,
// from any process: it fails with ErrNoCall when the session has no such
// call and with session.ErrNotFound for an unknown session. Only the call's
// own events are decoded.
func (a *Agent) Call(ctx context.Context, sessionID, callID string) (CallState, error) {
	st := CallState{CallID: callID, Calls: []session.CodeDispatch{}}
	if err := a.readCall(ctx, sessionID, &st); err != nil {
		return CallState{}, err
	}
	if st.State == "" {
		return CallState{}, fmt.Errorf("%w: no call %q in session %q", ErrNoCall, callID, sessionID)
	}
	return st, nil
}

// readCall folds the session's events after st.Seq into st.
func (a *Agent) readCall(ctx context.Context, sessionID string, st *CallState) error {
	err := session.Pages(ctx, a.store, sessionID, st.Seq, scanPage, readBytes, func(page []session.Event) bool {
		for _, e := range page {
			st.Seq = e.Seq
			switch e.Type {
			case session.TypeToolCall:
				if p, ok := e.Payload().(*session.ToolCall); ok && p.CallID == st.CallID && st.State == "" {
					st.Tool, st.Arguments, st.State = p.Name, json.RawMessage(p.Arguments), CallOpen
					if !json.Valid(st.Arguments) {
						st.Arguments, _ = json.Marshal(p.Arguments)
					}
				}
			case session.TypeToolResult:
				if p, ok := e.Payload().(*session.ToolResult); ok && p.CallID == st.CallID && st.State == CallOpen {
					res := p.Result
					st.Result, st.State = &res, CallSettled
				}
			case session.TypeCodeDispatch:
				if p, ok := e.Payload().(*session.CodeDispatch); ok && p.RootCallID == st.CallID && st.State != "" {
					st.Calls = append(st.Calls, *p)
				}
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("agent: read session %q: %w", sessionID, err)
	}
	return nil
}

// AwaitCall is Call that, while the call is open, waits up to wait for its
// result to be logged (by any process), returning the state it found last.
// Each wake-up reads only the events logged since the last.
func (a *Agent) AwaitCall(ctx context.Context, sessionID, callID string, wait time.Duration) (CallState, error) {
	st, err := a.Call(ctx, sessionID, callID)
	if err != nil || st.State != CallOpen || wait <= 0 {
		return st, err
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for st.State == CallOpen {
		if err := a.store.Wait(wctx, sessionID, st.Seq); err != nil {
			if wctx.Err() != nil {
				return st, nil // waited as long as asked (or the caller left): still open
			}
			return st, err
		}
		if err := a.readCall(ctx, sessionID, &st); err != nil {
			return st, err
		}
	}
	return st, nil
}
