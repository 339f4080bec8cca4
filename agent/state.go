package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// logState is what a step needs to know about the log before it, derived
// from the events. The agent caches it per session and folds in only the
// events it has not seen; it keeps a checkpoint of it in the store, so that
// after a restart a step reads the checkpoint and the events after it, not
// the whole log.
type logState struct {
	Seq       int64            `json:"seq"`       // the last event folded in
	Scope     string           `json:"scope"`     // the session's scope
	Turn      int              `json:"turn"`      // of the last tool/call; 0 when there is none
	Step      int              `json:"step"`      // likewise
	Concluded bool             `json:"concluded"` // a result of that step concluded the turn
	Pending   []pendingContext `json:"pending"`   // contexts no user/context has committed yet
	// Open are the tool/calls without a tool/result yet: call id → seq.
	// At a step's start, with leases, they are calls their step left (see
	// closeLeft).
	Open map[string]int64 `json:"open,omitempty"`
	// Suspended are the open run_code calls that suspended (or that recovery
	// found resumable): call id → seq of the tool/code-suspended event.
	Suspended map[string]int64 `json:"suspended,omitempty"`
	Complete  bool             `json:"-"` // callIDs holds every tool/call id of the log
	callIDs   map[string]bool  // tool/call ids folded in (all of them when Complete), at most maxCallIDs
	saved     int64            // the Seq of the last checkpoint saved
}

// pendingContext is a context a tool/result carried that no user/context has
// committed yet.
type pendingContext struct {
	CallID string           `json:"call_id"`
	Ctx    registry.Context `json:"context"`
}

// checkpointEvery is how many events may follow a session's checkpoint before
// the agent saves a new one, with the next step's first write: the first step
// after a restart folds at most this many events and one step's. Larger, that
// step cost markedly more than a new session's first; smaller was no cheaper
// (BENCHMARKS.md, "Figures behind the code's choices").
const checkpointEvery = 64

// maxCallIDs bounds the call ids a session's cached state remembers, so that
// its memory does not grow with the session: past it the state forgets them
// and asks the store's index about a step's ids (runs, whose ids the agent
// mints, ask nothing).
const maxCallIDs = 4096

func newLogState(scope string) *logState {
	return &logState{Scope: scope, Complete: true, callIDs: map[string]bool{}}
}

// foldLog derives the log state of a whole log. A user/context commits the
// oldest pending context of the call it names; contexts stay pending in log
// (= model) order.
func foldLog(events []session.Event) *logState {
	st := newLogState("")
	st.apply(events)
	return st
}

// apply folds more events into the state. It decodes only the members it
// needs, of only the types it needs: a run's nested events and results'
// values are most of a log and none of a step's state. An event whose
// members do not decode is skipped.
func (st *logState) apply(events []session.Event) {
	for _, e := range events {
		st.Seq = max(st.Seq, e.Seq)
		switch e.Type {
		case session.TypeToolCall:
			var p struct {
				Turn   int    `json:"turn"`
				Step   int    `json:"step"`
				CallID string `json:"call_id"`
			}
			if e.Decode(&p) != nil {
				continue
			}
			if len(st.callIDs) >= maxCallIDs {
				clear(st.callIDs)
				st.Complete = false
			}
			st.callIDs[p.CallID] = true
			if st.Open == nil {
				st.Open = map[string]int64{}
			}
			st.Open[p.CallID] = e.Seq
			if p.Turn != st.Turn || p.Step != st.Step {
				st.Turn, st.Step, st.Concluded = p.Turn, p.Step, false
			}
		case session.TypeToolResult:
			var p struct {
				CallID        string             `json:"call_id"`
				Contexts      []registry.Context `json:"contexts"`
				ConcludesTurn bool               `json:"concludes_turn"`
			}
			if e.Decode(&p) != nil {
				continue
			}
			delete(st.Open, p.CallID)
			delete(st.Suspended, p.CallID)
			for _, c := range p.Contexts {
				st.Pending = append(st.Pending, pendingContext{CallID: p.CallID, Ctx: c})
			}
			st.Concluded = st.Concluded || p.ConcludesTurn
		case session.TypeCodeSuspended:
			var p struct {
				CallID string `json:"call_id"`
			}
			if e.Decode(&p) != nil {
				continue
			}
			if _, open := st.Open[p.CallID]; open {
				if st.Suspended == nil {
					st.Suspended = map[string]int64{}
				}
				st.Suspended[p.CallID] = e.Seq
			}
		case session.TypeUserContext:
			var p struct {
				CallID string `json:"call_id"`
			}
			if e.Decode(&p) != nil || p.CallID == "" {
				continue
			}
			if i := slices.IndexFunc(st.Pending, func(q pendingContext) bool { return q.CallID == p.CallID }); i >= 0 {
				st.Pending = slices.Delete(st.Pending, i, i+1)
			}
		}
	}
}

// applyOwn folds the events a step wrote, when they directly follow what
// the state has seen (nobody else wrote in between); otherwise the next
// step reads them back from the log.
func (st *logState) applyOwn(events []session.Event) {
	for i, e := range events {
		if e.Seq != st.Seq+int64(i)+1 {
			return
		}
	}
	st.apply(events)
}

// next numbers the coming step: the step after the last one, or step 1 of
// the next turn after a step that concluded its turn.
func (st *logState) next() (turn, step int) {
	switch {
	case st.Turn == 0:
		return 1, 1
	case st.Concluded:
		return st.Turn + 1, 1
	default:
		return st.Turn, st.Step + 1
	}
}

// maxCachedStates bounds the per-session log states an agent keeps.
const maxCachedStates = 4096

// logState returns the session's log state: the cached one with the events
// appended since it was read (by any process: the log is the truth, the
// cache only remembers how far it was read), or, for a session not cached,
// its checkpoint and the events after it. A session the step creates starts
// empty. Callers hold the session's step lock, which also guards the state.
func (a *Agent) logState(ctx context.Context, sessionID string, create *session.Session) (*logState, error) {
	a.mu.Lock()
	st := a.states[sessionID]
	a.mu.Unlock()
	switch {
	case create != nil:
		st = newLogState(create.Scope)
	case st == nil:
		var err error
		if st, err = a.loadState(ctx, sessionID); err != nil {
			return nil, err
		}
		fallthrough
	default:
		if err := session.Pages(ctx, a.store, sessionID, st.Seq, scanPage, readBytes, func(events []session.Event) bool {
			st.apply(events)
			return true
		}); err != nil {
			return nil, err
		}
	}
	a.mu.Lock()
	if len(a.states) >= maxCachedStates && a.states[sessionID] == nil {
		for id := range a.states { // drop an arbitrary one; it is rebuilt from the log when needed
			delete(a.states, id)
			break
		}
	}
	a.states[sessionID] = st
	a.mu.Unlock()
	return st, nil
}

// loadState starts the state of a session the agent has not cached: from
// its checkpoint when it has one (the call ids before it then come from the
// store's index), else from nothing.
func (a *Agent) loadState(ctx context.Context, sessionID string) (*logState, error) {
	cp, err := a.store.LoadCheckpoint(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if cp.Seq > 0 {
		var saved logState
		err := json.Unmarshal(cp.State, &saved)
		if err == nil && saved.Seq == cp.Seq && saved.Scope != "" {
			// A session's scope never changes: the checkpoint's is the header's.
			saved.callIDs, saved.saved = map[string]bool{}, cp.Seq
			return &saved, nil
		}
		a.opts.Logger.Warn("agent: ignoring a checkpoint that does not decode", "session", sessionID, "seq", cp.Seq, "err", err)
	}
	sess, err := a.store.GetSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return newLogState(sess.Scope), nil
}

// usedCallID returns a call id of calls the session already used, or "".
func (a *Agent) usedCallID(ctx context.Context, sessionID string, st *logState, calls []ToolCall) (string, error) {
	var unknown []string
	for _, c := range calls {
		if st.callIDs[c.ID] {
			return c.ID, nil
		}
		unknown = append(unknown, c.ID)
	}
	if st.Complete || len(unknown) == 0 {
		return "", nil
	}
	used, err := a.store.UsedCallIDs(ctx, sessionID, unknown)
	if err != nil || len(used) == 0 {
		return "", err
	}
	return used[0], nil
}

// checkpoint returns a checkpoint of the state when enough events have
// passed since the last one, for the step's first write to carry (it names
// the state before that write's events, so it costs no write of its own),
// and nil otherwise. Losing it costs a longer read after a restart, nothing
// else.
func (a *Agent) checkpoint(sessionID string, st *logState) *session.Checkpoint {
	if st.Seq-st.saved < checkpointEvery {
		return nil
	}
	state, err := json.Marshal(st)
	if err != nil {
		a.opts.Logger.Warn("agent: checkpoint not saved", "session", sessionID, "err", fmt.Errorf("encode: %w", err))
		return nil
	}
	st.saved = st.Seq
	return &session.Checkpoint{Seq: st.Seq, State: state}
}
