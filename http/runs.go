package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// Entries of runs (label "entry" of the run metrics).
const (
	entryRun  = "run"
	entryStep = "step"
	entryMCP  = "mcp" // a tools/call over /mcp (admission only)
)

// runRequest is the body of POST /v1/run.
type runRequest struct {
	Code        string `json:"code"`
	Description string `json:"description"`
	Scope       string `json:"scope"`
	SessionID   string `json:"session_id"`
	TimeoutMS   *int64 `json:"timeout_ms"`
	Ephemeral   bool   `json:"ephemeral"`
}

// run serves POST /v1/run: a client's program, run in Code Mode in any
// scope whatever its mode, logged in a session like a model's run_code call.
// Without session_id it creates a new session of scope and logs the run
// there (the reply's session_id names it); with "ephemeral": true that
// session is deleted once the run has its result, and the reply says
// "session_deleted": true (ephemeral with session_id is a 400: it never
// deletes a session the client named). A failed program is a 200 with
// is_error; timeout_ms (0: the configured limit) is capped at limits.timeout.
func (s *Server) run(w http.ResponseWriter, r *http.Request) error {
	var req runRequest
	if e := decodeBody(r, &req, false); e != nil {
		return e
	}
	if req.Code == "" {
		return badRequest("code is required: the body of an async function, in JavaScript or TypeScript")
	}
	limit := s.app.Config.Limits.Timeout.Std()
	var timeout time.Duration
	if req.TimeoutMS != nil {
		ms := *req.TimeoutMS
		if ms < 0 {
			return badRequest("timeout_ms must not be negative, got %d", ms)
		}
		if timeout = limit; ms > 0 && ms < limit.Milliseconds() {
			timeout = time.Duration(ms) * time.Millisecond
		}
	}
	scope := req.Scope
	if req.Ephemeral && req.SessionID != "" {
		return badRequest("ephemeral deletes the session a run creates: leave session_id out, or ephemeral")
	}
	if req.SessionID != "" {
		if e := checkID("session_id", req.SessionID); e != nil {
			return e
		}
		sess, e := s.session(r, req.SessionID)
		if e != nil {
			return e
		}
		if req.Scope != "" && req.Scope != sess.Scope {
			if _, e := s.resolveScope(r, req.Scope); e != nil {
				return e
			}
			return badRequest("session %q is in scope %q, not %q: leave scope out to use the session's", sess.ID, sess.Scope, req.Scope)
		}
		scope = "" // the session's
	} else if _, e := s.resolveScope(r, scope); e != nil {
		return e
	}

	release, ok := s.admit(w, r, entryRun, int64(s.app.Config.Limits.Memory))
	if !ok {
		return nil
	}
	defer release()
	start := time.Now()
	res, gate, err := s.app.RunGated(r.Context(), app.RunRequest{
		Code: req.Code, Description: req.Description, Scope: scope, SessionID: req.SessionID, Timeout: timeout,
		Ephemeral: req.Ephemeral, Hold: s.app.Config.Approvals.Hold.Std(),
	})
	var status int
	var body []byte
	if err == nil {
		// The reply is built while the log is flushed, and sent once it is
		// durable.
		status, body = encodeJSON(http.StatusOK, res)
		err = gate.Wait(context.WithoutCancel(r.Context()))
	}
	elapsed := time.Since(start)
	releaseBefore(r, release)
	if err != nil {
		return s.runFailed(r, entryRun, elapsed, err, "session", req.SessionID)
	}
	sendBody(w, status, body) // before its metrics and log line
	outcome, kind := outcomeOK, ""
	attrs := []any{"session", res.SessionID, "call_id", res.CallID, "duration", elapsed, "sub_calls", len(res.Calls), "status", res.Status}
	if res.IsError && res.Status != app.StatusSuspended {
		outcome, kind = outcomeError, failureKind(res.Error)
		if res.Error != nil {
			attrs = append(attrs, "code", string(res.Error.Code), "kind", res.Error.Kind)
		}
	}
	s.metrics.runDuration.WithLabelValues(entryRun, outcome, kind).Observe(elapsed.Seconds())
	s.metrics.runs.WithLabelValues(entryRun, outcome).Inc()
	s.logFor(r).Info("run", append(attrs, "outcome", outcome)...)
	return nil
}

// stepRequest is the body of POST /v1/sessions/{id}/steps.
type stepRequest struct {
	ToolCalls *[]stepCall `json:"tool_calls"`
}

// stepCall is one tool call of a model response. Arguments is the model's
// raw JSON string; a JSON object is accepted too and logged compacted.
type stepCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// stepResult is one result of a step, in model order: its wire form.
type stepResult struct {
	ToolCallID string `json:"tool_call_id"`
	session.Result
}

// stepResponse is the response of POST /v1/sessions/{id}/steps.
type stepResponse struct {
	Results       []stepResult       `json:"results"`
	Contexts      []registry.Context `json:"contexts"`
	ConcludesTurn bool               `json:"concludes_turn"`
	// Suspended lists the run_code calls that suspended (their results have
	// code SUSPENDED and are not results: those come when the runs resume),
	// with PendingApprovals, the asks they wait for.
	Suspended        []string                `json:"suspended,omitempty"`
	PendingApprovals []agent.PendingApproval `json:"pending_approvals,omitempty"`
}

// steps serves POST /v1/sessions/{id}/steps: one model response's tool calls
// run in the session's scope and logged in model order. A call waiting for
// approval holds the request (and its run slot) until it is answered.
func (s *Server) steps(w http.ResponseWriter, r *http.Request) error {
	var req stepRequest
	sess, e := s.sessionRequest(r, &req)
	if e != nil {
		return e
	}
	calls, e := toolCalls(req)
	if e != nil {
		return e
	}

	release, ok := s.admit(w, r, entryStep, stepMemory(calls, int64(s.app.Config.Limits.Memory)))
	if !ok {
		return nil
	}
	defer release()
	start := time.Now()
	out, gate, err := s.app.Agent.StepWith(r.Context(), sess.ID, calls, agent.StepOptions{Hold: s.app.Config.Approvals.Hold.Std()})
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.ID
	}
	var status int
	var body []byte
	outcome, kind := outcomeOK, ""
	var codes []string
	if err == nil {
		// The reply is built while the log is flushed, and sent once it is
		// durable.
		resp := stepResponse{Results: make([]stepResult, len(out.Results)), Contexts: out.Contexts, ConcludesTurn: out.ConcludesTurn}
		if resp.Contexts == nil {
			resp.Contexts = []registry.Context{}
		}
		for i, cr := range out.Results {
			sr := stepResult{ToolCallID: cr.ToolCallID, Result: session.ResultOf(cr.Result)}
			sr.Contexts = nil // the step's contexts are listed once, below
			if cr.Result.Code() == registry.CodeSuspended {
				resp.Suspended = append(resp.Suspended, cr.ToolCallID)
			} else if sr.IsError {
				if outcome == outcomeOK { // the first failure names the kind
					outcome, kind = outcomeError, failureKind(cr.Result.Error())
				}
				codes = append(codes, string(cr.Result.Code()))
			}
			resp.Results[i] = sr
		}
		if len(resp.Suspended) > 0 {
			resp.PendingApprovals, err = s.app.PendingOf(r.Context(), sess.ID, resp.Suspended...)
		}
		status, body = encodeJSON(http.StatusOK, resp)
		if err == nil {
			err = gate.Wait(context.WithoutCancel(r.Context()))
		}
	}
	elapsed := time.Since(start)
	releaseBefore(r, release)
	if err != nil {
		return s.runFailed(r, entryStep, elapsed, err, "session", sess.ID, "call_ids", ids)
	}
	sendBody(w, status, body) // before its metrics and log line
	s.metrics.runDuration.WithLabelValues(entryStep, outcome, kind).Observe(elapsed.Seconds())
	s.metrics.runs.WithLabelValues(entryStep, outcome).Inc()
	attrs := []any{"session", sess.ID, "call_ids", ids, "duration", elapsed, "outcome", outcome}
	if len(codes) > 0 {
		attrs = append(attrs, "codes", codes)
	}
	s.logFor(r).Info("step", attrs...)
	return nil
}

// toolCalls checks and converts the calls of a step request.
func toolCalls(req stepRequest) ([]agent.ToolCall, *apiError) {
	if req.ToolCalls == nil {
		return nil, badRequest("tool_calls is required (an empty list only commits pending contexts)")
	}
	in := *req.ToolCalls
	calls := make([]agent.ToolCall, len(in))
	seen := make(map[string]bool, len(in))
	for i, c := range in {
		switch {
		case c.ID == "":
			return nil, badRequest("tool_calls[%d].id is required", i)
		case seen[c.ID]:
			return nil, badRequest("tool_calls[%d].id: duplicate id %q", i, c.ID)
		case c.Name == "":
			return nil, badRequest("tool_calls[%d].name is required", i)
		}
		if e := checkID(fmt.Sprintf("tool_calls[%d].id", i), c.ID); e != nil {
			return nil, e
		}
		if e := checkID(fmt.Sprintf("tool_calls[%d].name", i), c.Name); e != nil {
			return nil, e
		}
		seen[c.ID] = true
		args, err := rawArguments(c.Arguments)
		if err != nil {
			return nil, badRequest("tool_calls[%d].arguments: %v", i, err)
		}
		calls[i] = agent.ToolCall{ID: c.ID, Name: c.Name, Arguments: args}
	}
	return calls, nil
}

// rawArguments reads a call's arguments: the model's raw string (logged
// verbatim, even when it is not valid JSON: the pipeline reports that as the
// call's INVALID_ARGS), or an object, compacted. Absent or null means none.
func rawArguments(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case raw[0] == '{':
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return "", err
		}
		return buf.String(), nil
	}
	return "", errors.New("want the model's raw JSON string (or a JSON object)")
}

// stepMemory is what a step reserves from the memory budget: a run's
// memory limit when it calls run_code, nothing more than its body otherwise.
func stepMemory(calls []agent.ToolCall, runMemory int64) int64 {
	for _, c := range calls {
		if c.Name == registry.RunCode {
			return runMemory
		}
	}
	return 0
}

// admit takes a run slot for the request and reserves memory bytes of the
// memory budget, or writes the 503 and reports false: at once when every
// slot is taken and the queue is full or the budget cannot take memory, or
// when the request ends while queued. release may be called more than once.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, entry string, memory int64) (release func(), ok bool) {
	slot, err := s.runs.acquire(r.Context())
	if err == nil {
		free, err := s.budget.Reserve(memory)
		if err != nil {
			slot()
			s.metrics.runs.WithLabelValues(entry, outcomeOverloaded).Inc()
			s.refuseMemory(w, r, entry, err)
			return nil, false
		}
		return sync.OnceFunc(func() { free(); slot() }), true
	}
	s.metrics.runs.WithLabelValues(entry, outcomeOverloaded).Inc()
	var e *apiError
	switch {
	case errors.Is(err, errOverloaded):
		w.Header().Set("Retry-After", "1")
		e = errorf(http.StatusServiceUnavailable, CodeOverloaded, "the server is at capacity (%d runs in flight, %d queued); retry later", s.cfg.MaxInflight, s.cfg.MaxQueued)
	case errors.Is(err, errStopping):
		e = errorf(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down")
	default:
		e = errorf(http.StatusServiceUnavailable, CodeRequestTimeout, "no run slot became free before the request ended")
	}
	s.logFor(r).Warn("run refused", "entry", entry, "reason", err)
	s.writeError(w, e)
	return nil, false
}

// releaseBefore returns what a run or step held (its slot, its memory, its
// body's reservation) before its reply is sent: a client told of the result
// may send its next request at once, and must not find this one's share
// still taken.
func releaseBefore(r *http.Request, release func()) {
	release()
	releaseBody(r)
}

// runFailed counts and logs a run or step (entry) that produced no result
// after elapsed, with attrs naming it, and returns its error reply.
func (s *Server) runFailed(r *http.Request, entry string, elapsed time.Duration, err error, attrs ...any) *apiError {
	s.metrics.runDuration.WithLabelValues(entry, outcomeFailed, "").Observe(elapsed.Seconds())
	s.metrics.runs.WithLabelValues(entry, outcomeFailed).Inc()
	e := s.runError(r, entry, err)
	s.logFor(r).Warn(entry, append(attrs, "duration", elapsed, "outcome", outcomeFailed, "status", e.Status, "err", err)...)
	return e
}

// runError maps the error of a run or step that produced no result.
func (s *Server) runError(r *http.Request, what string, err error) *apiError {
	switch {
	case errors.Is(err, app.ErrUnknownScope):
		return errorf(http.StatusNotFound, CodeUnknownScope, "%s", strings.TrimPrefix(err.Error(), "app: "))
	case errors.Is(err, session.ErrNotFound):
		return errorf(http.StatusNotFound, CodeUnknownSession, "unknown session")
	case errors.Is(err, agent.ErrInvalidCalls):
		return badRequest("%s", strings.TrimPrefix(err.Error(), "agent: "))
	case errors.Is(err, agent.ErrSuspended):
		return errorf(http.StatusConflict, CodeRunSuspended, "%s", strings.TrimPrefix(err.Error(), "agent: "))
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		if s.isStopping() {
			return errorf(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down")
		}
		return errorf(http.StatusServiceUnavailable, CodeRequestTimeout, "the request ended before its %s could start", what)
	}
	return s.internal(r, what, err)
}
