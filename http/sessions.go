package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/session"
)

// sessionRequest is the session the path's {id} names, as session returns
// it, and the request's body decoded into req; a body that does not decode
// is answered only for a session the request may use.
func (s *Server) sessionRequest(r *http.Request, req any) (session.Session, *apiError) {
	sess, e := s.session(r, chi.URLParam(r, "id"))
	if e != nil {
		return session.Session{}, e
	}
	if e := decodeBody(r, req, false); e != nil {
		return session.Session{}, e
	}
	return sess, nil
}

// session returns the session the request may use. One in a scope the key
// may not use is a 404 exactly like one that does not exist.
func (s *Server) session(r *http.Request, id string) (session.Session, *apiError) {
	if e := checkID("the session id", id); e != nil {
		return session.Session{}, e
	}
	sess, err := s.app.Store.GetSession(r.Context(), id)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return session.Session{}, unknownSession(id)
	case err != nil:
		return session.Session{}, s.storeFailed(r, "read session", err)
	case !ScopeAllowed(r.Context(), sess.Scope):
		return session.Session{}, unknownSession(id)
	}
	return sess, nil
}

// sessionJSON is a session's header: what GET /v1/sessions/{id} answers and
// GET /v1/sessions lists. LastSeq is the seq of its last event (0: none);
// UpdatedAt the time of that event (CreatedAt when there is none).
type sessionJSON struct {
	ID        string    `json:"id"`
	Scope     string    `json:"scope"`
	CreatedAt time.Time `json:"created_at"`
	LastSeq   int64     `json:"last_seq"`
	UpdatedAt time.Time `json:"updated_at"`
}

func sessionOf(s session.Session) sessionJSON {
	updated := s.UpdatedAt
	if updated.IsZero() {
		updated = s.CreatedAt
	}
	return sessionJSON{ID: s.ID, Scope: s.Scope, CreatedAt: s.CreatedAt, LastSeq: s.LastSeq, UpdatedAt: updated}
}

// maxListScans bounds the store pages one GET /v1/sessions reads when it
// filters by the key's scopes itself.
const maxListScans = 8

// listSessions serves GET /v1/sessions?scope=&limit=&cursor=:
// {"sessions":[…],"next_cursor"?}, newest first, limit per page (default
// session.DefaultPageSize, at most session.MaxPageSize). next_cursor, absent
// on the last page, continues the listing; a page may hold fewer than limit
// sessions before the last one (when a key's scopes filter it), so only its
// absence marks the end. A key lists only the sessions of its scopes, and a
// scope it may not use is a 404 UNKNOWN_SCOPE like one that does not exist;
// a bad cursor is a 400.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := session.SessionFilter{Scope: q.Get("scope"), Cursor: q.Get("cursor"), Limit: session.DefaultPageSize}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return badRequest("limit: want a positive integer, got %q", v)
		}
		f.Limit = min(n, session.MaxPageSize)
	}
	// keep filters the store's pages when the key has several scopes and
	// the request names none; otherwise the store filters.
	var keep map[string]bool
	scopes, all := allowedScopes(r.Context())
	switch {
	case f.Scope != "":
		if !ScopeAllowed(r.Context(), f.Scope) {
			return unknownScope(f.Scope)
		}
	case all:
	case len(scopes) == 1:
		f.Scope = scopes[0]
	default:
		keep = make(map[string]bool, len(scopes))
		for _, sc := range scopes {
			keep[sc] = true
		}
	}
	out := []sessionJSON{}
	for scans := 0; ; scans++ {
		page, err := s.app.Store.ListSessions(r.Context(), f)
		switch {
		case errors.Is(err, session.ErrBadCursor):
			return badRequest("cursor: not one a page of this listing returned")
		case err != nil:
			return s.storeFailed(r, "list sessions", err)
		}
		for _, sess := range page.Sessions {
			if keep == nil || keep[sess.Scope] {
				out = append(out, sessionOf(sess))
			}
		}
		f.Cursor = page.Next
		if keep == nil || len(out) > 0 || page.Next == "" || scans+1 >= maxListScans {
			break
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Sessions   []sessionJSON `json:"sessions"`
		NextCursor string        `json:"next_cursor,omitempty"`
	}{out, f.Cursor})
	return nil
}

// deleteSession serves DELETE /v1/sessions/{id}: 204 once the session and
// its log are gone; 404 for an unknown session (or one in a scope the key
// may not use). A run still writing to it fails.
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request, sess session.Session) error {
	if err := s.app.Store.DeleteSession(r.Context(), sess.ID); err != nil {
		return s.storeError(r, sess.ID, err)
	}
	s.logFor(r).Info("session deleted", "session", sess.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// createSession serves POST /v1/sessions {"scope"?}: 201 with the new
// session. An empty body means the default scope.
func (s *Server) createSession(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Scope string `json:"scope"`
	}
	if e := decodeBody(r, &req, true); e != nil {
		return e
	}
	v, e := s.resolveScope(r, req.Scope)
	if e != nil {
		return e
	}
	sess, err := s.app.NewSession(r.Context(), v.Scope())
	if err != nil {
		if errors.Is(err, app.ErrUnknownScope) {
			return unknownScope(v.Scope())
		}
		return s.storeFailed(r, "create session", err)
	}
	w.Header().Set("Location", "/v1/sessions/"+sess.ID)
	writeJSON(w, http.StatusCreated, sessionOf(sess))
	return nil
}

// getSession serves GET /v1/sessions/{id}: the session's header.
func (s *Server) getSession(w http.ResponseWriter, r *http.Request, sess session.Session) error {
	writeJSON(w, http.StatusOK, sessionOf(sess))
	return nil
}

// messages serves GET /v1/sessions/{id}/messages: {"messages":[...]}, the
// model-facing conversation rebuilt from the log alone. The log is read in
// bounded pages (the nested Code Mode dispatches, which carry every
// sub-call's arguments and content, are dropped as they are read), and the
// messages are sent as they settle (session.MessageBuilder), in chunks of
// about listChunk bytes, so that what a read holds does not grow with the
// session: a page, a step and a chunk. A reply that fits in one chunk is
// sent whole, with its length. A failure of the store before the first
// chunk is an error reply; after it, the connection is cut rather than the
// body ended as a well-formed but partial list.
func (s *Server) messages(w http.ResponseWriter, r *http.Request, sess session.Session) error {
	var b session.MessageBuilder
	out := &listWriter[session.Message]{w: w}
	out.buf.WriteString(`{"messages":[`)
	p := newPager(s, sess.ID, 0)
	for {
		page, full, err := p.next(r.Context(), 0)
		if err != nil {
			if !out.started {
				return s.storeError(r, sess.ID, err)
			}
			s.log.Warn("messages: the log could not be read; the reply is cut", "session", sess.ID, "error", err)
			panic(http.ErrAbortHandler)
		}
		b.Add(page...)
		if !full {
			break
		}
		if !out.write(b.Settled()) {
			s.endList(w, out.err, out.started, "messages")
			return nil
		}
	}
	if !out.write(b.Rest()) {
		s.endList(w, out.err, out.started, "messages")
		return nil
	}
	out.buf.WriteString("]}\n")
	out.end()
	return nil
}

// endList ends a reply whose listWriter stopped: the client left, or an
// item did not encode, which is a bug reported as one (an error reply, or
// the connection cut once the body has started).
func (s *Server) endList(w http.ResponseWriter, err error, started bool, what string) {
	if err == nil {
		return // the client left
	}
	s.log.Error(what+": an item did not encode", "error", err)
	if !started {
		s.writeError(w, &apiError{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "the " + what + " could not be encoded"})
		return
	}
	panic(http.ErrAbortHandler)
}

// listChunk is about how much of a large reply is sent at a time.
const listChunk = 64 << 10

// listWriter writes a reply that holds a long list (the messages of
// /messages, the events of /events): the items comma-separated, each as
// writeJSON encodes it, in chunks of about listChunk bytes, so that the
// reply is never whole in memory; the first chunk sends the status and
// headers. A reply that fits in one chunk is sent whole, with its length.
// Each chunk is one write, which server.write_timeout bounds.
type listWriter[T any] struct {
	w       http.ResponseWriter
	buf     bytes.Buffer
	enc     *json.Encoder // onto buf
	n       int           // items written
	started bool          // the status has been sent
	err     error         // an item that did not encode
}

// end sends what is buffered: the whole reply when nothing was sent yet.
func (m *listWriter[T]) end() {
	if !m.started {
		writeBody(m.w, http.StatusOK, m.buf.Bytes())
		return
	}
	m.flush()
}

// write adds items and sends what passed listChunk; false when the client
// is gone or an item did not encode (err).
func (m *listWriter[T]) write(msgs []T) bool {
	for i := range msgs {
		if m.n > 0 {
			m.buf.WriteByte(',')
		}
		if m.enc == nil {
			m.enc = json.NewEncoder(&m.buf)
			m.enc.SetEscapeHTML(false) // as marshal
		}
		if err := m.enc.Encode(&msgs[i]); err != nil { // a bug: messages and events always encode
			m.err = err
			return false
		}
		m.buf.Truncate(m.buf.Len() - 1) // the encoder's newline
		m.n++
		if m.buf.Len() >= listChunk && !m.flush() {
			return false
		}
	}
	return true
}

// flush sends the buffer, the status and headers first.
func (m *listWriter[T]) flush() bool {
	if !m.started {
		h := m.w.Header()
		h.Set("Content-Type", "application/json; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		m.w.WriteHeader(http.StatusOK)
		m.started = true
	}
	err := writeChunks(m.w, m.buf.Bytes())
	m.buf.Reset()
	return err == nil
}

// approvals serves GET /v1/sessions/{id}/approvals: the pending asks,
// oldest first, as {"approvals":[{"id","tool","arguments","reason",…}]}.
func (s *Server) approvals(w http.ResponseWriter, r *http.Request, sess session.Session) error {
	pending, err := s.app.Agent.Approvals(r.Context(), sess.ID)
	if err != nil {
		return s.storeError(r, sess.ID, err)
	}
	if pending == nil {
		pending = []agent.PendingApproval{}
	}
	writeJSON(w, http.StatusOK, struct {
		Approvals []agent.PendingApproval `json:"approvals"`
	}{pending})
	return nil
}

// answerRequest is the body of POST /v1/sessions/{id}/approvals/{aid}.
type answerRequest struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// answer serves POST /v1/sessions/{id}/approvals/{aid}: allow or deny a
// pending ask; the waiting call resumes in whichever replica it waits. An
// unknown approval is a 404 UNKNOWN_APPROVAL; one answered already (by
// anyone, or by its timeout) a 409 APPROVAL_ANSWERED.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) error {
	var req answerRequest
	sess, e := s.sessionRequest(r, &req)
	if e != nil {
		return e
	}
	var allow bool
	switch req.Decision {
	case "allow":
		allow = true
	case "deny":
	default:
		return badRequest("decision: want allow or deny, got %q", req.Decision)
	}
	aid := chi.URLParam(r, "aid")
	if e := checkID("the approval id", aid); e != nil {
		return e
	}
	err := s.app.Agent.Answer(r.Context(), sess.ID, aid, allow, req.Reason)
	switch {
	case errors.Is(err, agent.ErrAnswered):
		return errorf(http.StatusConflict, CodeApprovalAnswered, "approval %q in session %q was answered already", aid, sess.ID)
	case errors.Is(err, agent.ErrNotFound):
		return errorf(http.StatusNotFound, CodeUnknownApproval, "no pending approval %q in session %q", aid, sess.ID)
	case err != nil:
		return s.storeError(r, sess.ID, err)
	}
	s.logFor(r).Info("approval answered", "session", sess.ID, "approval_id", aid, "decision", req.Decision)
	writeJSON(w, http.StatusOK, struct {
		ID       string `json:"id"`
		Decision string `json:"decision"`
		Reason   string `json:"reason,omitempty"`
	}{aid, req.Decision, req.Reason})
	return nil
}

// maxCallWait bounds ?wait of GET /v1/sessions/{id}/calls/{call_id}; the
// request's own timeout (server.request_timeout) may end it sooner.
const maxCallWait = 5 * time.Minute

// call serves GET /v1/sessions/{id}/calls/{call_id}: a top-level call's
// state from the log (any replica's): its request, "open" or "settled", its
// result once settled, and a program's settled SDK calls. With ?wait=D (a Go
// duration, at most 5m) an open call is waited for that long. An unknown
// call is a 404 UNKNOWN_CALL.
func (s *Server) call(w http.ResponseWriter, r *http.Request, sess session.Session) error {
	callID := chi.URLParam(r, "call_id")
	if e := checkID("the call id", callID); e != nil {
		return e
	}
	var wait time.Duration
	if v := r.URL.Query().Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > maxCallWait {
			return badRequest("wait: want a duration from 0s to %s, got %q", maxCallWait, v)
		}
		wait = d
	}
	st, err := s.app.Agent.AwaitCall(r.Context(), sess.ID, callID, wait)
	switch {
	case errors.Is(err, agent.ErrNoCall):
		return errorf(http.StatusNotFound, CodeUnknownCall, "no call %q in session %q", callID, sess.ID)
	case err != nil:
		return s.storeError(r, sess.ID, err)
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// storeError maps a failure reading or writing a session's log.
func (s *Server) storeError(r *http.Request, id string, err error) *apiError {
	if errors.Is(err, session.ErrNotFound) {
		return unknownSession(id)
	}
	return s.storeFailed(r, "session log", err)
}
