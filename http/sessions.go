package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/session"
)

// session returns the session the request may use. One in a scope the key
// may not use is a 404 exactly like one that does not exist.
func (s *Server) session(r *http.Request, id string) (session.Session, *apiError) {
	sess, err := s.app.Store.GetSession(r.Context(), id)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return session.Session{}, unknownSession(id)
	case err != nil:
		return session.Session{}, s.internal(r, "read session", err)
	case !ScopeAllowed(r.Context(), sess.Scope):
		return session.Session{}, unknownSession(id)
	}
	return sess, nil
}

// sessionJSON is a session's header.
type sessionJSON struct {
	ID        string    `json:"id"`
	Scope     string    `json:"scope"`
	CreatedAt time.Time `json:"created_at"`
}

// createSession serves POST /v1/sessions {"scope"?}: 201 with the new
// session. An empty body means the default scope.
func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Scope string `json:"scope"`
	}
	if e := decodeBody(r, &req, true); e != nil {
		s.writeError(w, e)
		return
	}
	v, e := s.resolveScope(r, req.Scope)
	if e != nil {
		s.writeError(w, e)
		return
	}
	sess, err := s.app.NewSession(r.Context(), v.Scope())
	if err != nil {
		if errors.Is(err, app.ErrUnknownScope) {
			s.writeError(w, unknownScope(v.Scope()))
			return
		}
		s.writeError(w, s.internal(r, "create session", err))
		return
	}
	w.Header().Set("Location", "/v1/sessions/"+sess.ID)
	writeJSON(w, http.StatusCreated, sessionJSON{sess.ID, sess.Scope, sess.CreatedAt})
}

// getSession serves GET /v1/sessions/{id}: the session's header.
func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	sess, e := s.session(r, chi.URLParam(r, "id"))
	if e != nil {
		s.writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, sessionJSON{sess.ID, sess.Scope, sess.CreatedAt})
}

// messages serves GET /v1/sessions/{id}/messages: {"messages":[...]}, the
// model-facing conversation rebuilt from the log alone. The log is read in
// bounded pages, and only the events that become messages are kept: the
// nested Code Mode dispatches, which carry every sub-call's arguments and
// content, are dropped as they are read.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	sess, e := s.session(r, chi.URLParam(r, "id"))
	if e != nil {
		s.writeError(w, e)
		return
	}
	var events []session.Event
	p := newPager(s, sess.ID, 0)
	for {
		page, full, err := p.next(r.Context(), 0)
		if err != nil {
			s.writeError(w, s.storeError(r, sess.ID, err))
			return
		}
		for _, ev := range page {
			switch ev.Type {
			case session.TypeToolCall, session.TypeToolResult, session.TypeUserContext:
				events = append(events, ev)
			}
		}
		if !full {
			break
		}
	}
	msgs := session.Messages(events)
	if msgs == nil {
		msgs = []session.Message{}
	}
	writeJSON(w, http.StatusOK, struct {
		Messages []session.Message `json:"messages"`
	}{msgs})
}

// approvals serves GET /v1/sessions/{id}/approvals: the pending asks,
// oldest first, as a JSON array of {"id","tool","arguments","reason",…}.
func (s *Server) approvals(w http.ResponseWriter, r *http.Request) {
	sess, e := s.session(r, chi.URLParam(r, "id"))
	if e != nil {
		s.writeError(w, e)
		return
	}
	pending, err := s.app.Agent.Approvals(r.Context(), sess.ID)
	if err != nil {
		s.writeError(w, s.storeError(r, sess.ID, err))
		return
	}
	if pending == nil {
		pending = []agent.PendingApproval{}
	}
	writeJSON(w, http.StatusOK, pending)
}

// answerRequest is the body of POST /v1/sessions/{id}/approvals/{aid}.
type answerRequest struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// answer serves POST /v1/sessions/{id}/approvals/{aid}: allow or deny a
// pending ask; the waiting call resumes in whichever replica it waits. An
// approval that is unknown or already answered is a 404.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	sess, e := s.session(r, chi.URLParam(r, "id"))
	if e != nil {
		s.writeError(w, e)
		return
	}
	var req answerRequest
	if e := decodeBody(r, &req, false); e != nil {
		s.writeError(w, e)
		return
	}
	var allow bool
	switch req.Decision {
	case "allow":
		allow = true
	case "deny":
	default:
		s.writeError(w, badRequest("decision: want allow or deny, got %q", req.Decision))
		return
	}
	aid := chi.URLParam(r, "aid")
	err := s.app.Agent.Answer(r.Context(), sess.ID, aid, allow, req.Reason)
	switch {
	case errors.Is(err, agent.ErrNotFound):
		s.writeError(w, errorf(http.StatusNotFound, CodeUnknownApproval, "no pending approval %q in session %q", aid, sess.ID))
		return
	case err != nil:
		s.writeError(w, s.storeError(r, sess.ID, err))
		return
	}
	s.log.Info("approval answered", "session", sess.ID, "approval_id", aid, "decision", req.Decision)
	writeJSON(w, http.StatusOK, struct {
		ID       string `json:"id"`
		Decision string `json:"decision"`
		Reason   string `json:"reason,omitempty"`
	}{aid, req.Decision, req.Reason})
}

// storeError maps a failure reading or writing a session's log.
func (s *Server) storeError(r *http.Request, id string, err error) *apiError {
	if errors.Is(err, session.ErrNotFound) {
		return unknownSession(id)
	}
	return s.internal(r, "session log", err)
}
