package httpapi

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/codemode/codemode/session"
)

// streamBatch bounds how many events one read of a stream takes from the
// store.
const streamBatch = 256

// events serves GET /v1/sessions/{id}/events?after=SEQ: the session's events
// after SEQ as {"events":[...]}; or, for a client that accepts
// text/event-stream, a live stream of them (see stream).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if acceptsEventStream(r) {
		s.stream(w, r)
		return
	}
	s.withTimeout(http.HandlerFunc(s.eventsJSON)).ServeHTTP(w, r)
}

func acceptsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(v), "text/event-stream") {
			return true
		}
	}
	return false
}

// eventsJSON serves the JSON form; limit (optional, positive) caps the
// number of events returned.
func (s *Server) eventsJSON(w http.ResponseWriter, r *http.Request) {
	sess, e := s.session(r, chi.URLParam(r, "id"))
	if e != nil {
		s.writeError(w, e)
		return
	}
	q := r.URL.Query()
	after, e := seqParam("after", q.Get("after"))
	if e != nil {
		s.writeError(w, e)
		return
	}
	var limit int
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			s.writeError(w, badRequest("limit: want a positive integer, got %q", v))
			return
		}
		limit = n
	}
	events, err := s.app.Store.Events(r.Context(), sess.ID, after, limit)
	if err != nil {
		s.writeError(w, s.storeError(r, sess.ID, err))
		return
	}
	if events == nil {
		events = []session.Event{}
	}
	writeJSON(w, http.StatusOK, struct {
		Events []session.Event `json:"events"`
	}{events})
}

// seqParam reads a sequence number: empty is 0.
func seqParam(name, v string) (int64, *apiError) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest("%s: want a non-negative integer (an event seq), got %q", name, v)
	}
	return n, nil
}

// stream serves the live form: every event after the resume point, then
// each new one as it is appended, by this process or by any other sharing
// the store. Each event is
//
//	id: <seq>
//	event: <type>
//	data: <the event as JSON, as in the JSON form>
//
// The resume point is the Last-Event-ID header when present (what an
// EventSource sends on reconnect), else ?after, else the start. An idle
// stream gets a comment line every heartbeat. The stream ends when the
// client goes away, the server shuts down, or the store closes; it is not
// bounded by the request timeout.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	sess, e := s.session(r, chi.URLParam(r, "id"))
	if e != nil {
		s.writeError(w, e)
		return
	}
	after, e := seqParam("after", r.URL.Query().Get("after"))
	if e != nil {
		s.writeError(w, e)
		return
	}
	if _, ok := r.Header["Last-Event-Id"]; ok {
		if after, e = seqParam("Last-Event-ID", r.Header.Get("Last-Event-ID")); e != nil {
			s.writeError(w, e)
			return
		}
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.stopCtx, cancel)()

	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	flush := func() bool { return bw.Flush() == nil && rc.Flush() == nil }
	bw.WriteString(": session " + sess.ID + "\n\n")
	if !flush() {
		return
	}
	s.metrics.streams.Inc()
	defer s.metrics.streams.Dec()

	for {
		events, err := s.app.Store.Events(ctx, sess.ID, after, streamBatch)
		if err != nil {
			s.endStream(ctx, sess.ID, err)
			return
		}
		for _, ev := range events {
			data, err := marshal(ev)
			if err != nil {
				s.log.Error("event stream: encode event", "session", sess.ID, "seq", ev.Seq, "err", err)
				return
			}
			bw.WriteString("id: " + strconv.FormatInt(ev.Seq, 10) + "\nevent: " + oneLine(ev.Type) + "\ndata: ")
			bw.Write(data) // one line: marshal ends it with the newline
			bw.WriteString("\n")
			after = ev.Seq
		}
		if len(events) > 0 {
			if !flush() {
				return
			}
			if len(events) == streamBatch {
				continue
			}
		}
		switch s.waitEvents(ctx, sess.ID, after) {
		case waitIdle:
			bw.WriteString(": heartbeat\n\n")
			if !flush() {
				return
			}
		case waitEnd:
			return
		}
	}
}

// What waitEvents saw.
const (
	waitMore = iota // events after the seq exist
	waitIdle        // none within a heartbeat
	waitEnd         // the stream must end: the client left, shutdown, or the store closed
)

// waitEvents waits up to one heartbeat for events after seq.
func (s *Server) waitEvents(ctx context.Context, id string, after int64) int {
	wctx, cancel := context.WithTimeout(ctx, s.heartbeat)
	defer cancel()
	err := s.app.Store.Wait(wctx, id, after)
	switch {
	case err == nil:
		return waitMore
	case ctx.Err() != nil:
		return waitEnd
	case errors.Is(err, context.DeadlineExceeded):
		return waitIdle
	}
	s.endStream(ctx, id, err)
	return waitEnd
}

func (s *Server) endStream(ctx context.Context, id string, err error) {
	if ctx.Err() != nil || errors.Is(err, session.ErrClosed) {
		return
	}
	s.log.Warn("event stream ended by the store", "session", id, "err", err)
}

// oneLine keeps an event type on one line of the stream.
func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}
