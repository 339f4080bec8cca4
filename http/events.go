package httpapi

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/codemode/codemode/admission"
	"github.com/codemode/codemode/session"
)

// Bounds of reading a session's log. A read takes pages from the store. A
// store that bounds a read by bytes (session.BoundedReader: every store of
// the session package) gives pages of at most boundedPageEvents events that
// stop once they hold pageBytes. Another gives one event first, then at most
// pageEvents events, fewer once events turn out large: as many as fit
// pageBytes at the size of the largest seen so far (and at least one); its
// pages hold at most pageEvents times the largest event the service logs
// when a log of small events turns to large ones. The JSON form of /events
// answers at most maxEventsPage events, or about maxEventsPageBytes, per
// request, and says "more" when it stopped short.
const (
	boundedPageEvents  = 4096
	pageEvents         = 16
	pageBytes          = 4 << 20
	defaultEventsPage  = 1000
	maxEventsPage      = 10000
	maxEventsPageBytes = 8 << 20
	// eventsReadBytes bounds the store pages the JSON form reads: what
	// a reply being sent holds, however slowly its client reads.
	eventsReadBytes = 1 << 20
)

// pager reads a session's log in bounded pages, after a seq.
type pager struct {
	store   session.Store
	id      string
	after   int64 // the seq of the last event read
	largest int   // the largest event data seen, bytes
	bytes   int   // about the most a page holds (pageBytes by default)
}

func newPager(s *Server, id string, after int64) *pager {
	return &pager{store: s.app.Store, id: id, after: after, bytes: pageBytes}
}

// next reads the next page, at most most events (most <= 0: a whole page);
// an empty page means none are left for now, and full that the page is as
// long as was asked (more may follow at once).
func (p *pager) next(ctx context.Context, most int) (events []session.Event, full bool, err error) {
	if br, ok := p.store.(session.BoundedReader); ok {
		n := boundedPageEvents
		if most > 0 && most < n {
			n = most
		}
		events, err = br.EventsWithin(ctx, p.id, p.after, n, p.bytes)
		if err != nil || len(events) == 0 {
			return nil, false, err
		}
		p.after = events[len(events)-1].Seq
		return events, len(events) == n || eventBytes(events) >= p.bytes, nil
	}
	n := 1 // the first page tells the size of the events
	if p.largest > 0 {
		n = max(1, min(pageEvents, p.bytes/p.largest))
	}
	if most > 0 && most < n {
		n = most
	}
	events, err = p.store.Events(ctx, p.id, p.after, n)
	if err != nil || len(events) == 0 {
		return nil, false, err
	}
	p.after = events[len(events)-1].Seq
	for _, e := range events {
		p.largest = max(p.largest, len(e.Data))
	}
	return events, len(events) == n, nil
}

func eventBytes(events []session.Event) int {
	n := 0
	for _, e := range events {
		n += len(e.Data)
	}
	return n
}

// events serves GET /v1/sessions/{id}/events?after=SEQ: the session's events
// after SEQ as {"events":[...]}; or, for a client that accepts
// text/event-stream, a live stream of them (see stream).
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	if acceptsEventStream(r) {
		s.handleSession(s.stream).ServeHTTP(w, r)
		return nil
	}
	s.withTimeout(s.handleSession(s.eventsJSON)).ServeHTTP(w, r)
	return nil
}

func acceptsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(v), "text/event-stream") {
			return true
		}
	}
	return false
}

// eventsJSON serves the JSON form: {"events":[…],"more","next_after"?}, at
// most limit events (default defaultEventsPage, at most maxEventsPage; fewer
// once they pass maxEventsPageBytes). When more is true, next_after is the
// seq to pass as ?after= for the next page.
func (s *Server) eventsJSON(w http.ResponseWriter, r *http.Request, sess session.Session) error {
	q := r.URL.Query()
	after, e := seqParam("after", q.Get("after"))
	if e != nil {
		return e
	}
	limit := defaultEventsPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return badRequest("limit: want a positive integer, got %q", v)
		}
		limit = min(n, maxEventsPage)
	}
	s.writeEventsPage(w, r, sess.ID, after, limit)
	return nil
}

// writeEventsPage sends up to limit events after a seq, stopping early once
// they pass maxEventsPageBytes (but never before the first), as they are
// read: a store page at a time, in chunks of about listChunk bytes (see
// listWriter), so that a reply holds one page of the store and one chunk,
// however large it is and however slowly it is read. "more" reports that
// events may follow the last one sent. A failure of the store before the
// first chunk is an error reply; after it, the connection is cut rather
// than the page ended as a well-formed but short one.
func (s *Server) writeEventsPage(w http.ResponseWriter, r *http.Request, id string, after int64, limit int) {
	out := &listWriter[session.Event]{w: w}
	out.buf.WriteString(`{"events":[`)
	fail := func(err error) {
		if !out.started {
			s.writeError(w, s.storeError(r, id, err))
			return
		}
		s.log.Warn("events: the log could not be read; the reply is cut", "session", id, "error", err)
		panic(http.ErrAbortHandler)
	}
	p := newPager(s, id, after)
	p.bytes = eventsReadBytes
	n, size, more := 0, 0, false
	for n < limit {
		page, _, err := p.next(r.Context(), limit-n)
		if err != nil {
			fail(err)
			return
		}
		if len(page) == 0 {
			break
		}
		if !out.write(page) {
			s.endList(w, out.err, out.started, "events")
			return
		}
		n += len(page)
		if size += eventBytes(page); size >= maxEventsPageBytes {
			more = true
			break
		}
	}
	if n == limit && !more { // full: is there another?
		next, err := s.app.Store.Events(r.Context(), id, p.after, 1)
		if err != nil {
			fail(err)
			return
		}
		more = len(next) > 0
	}
	out.buf.WriteString(`],"more":`)
	out.buf.WriteString(strconv.FormatBool(more))
	if more {
		out.buf.WriteString(`,"next_after":`)
		out.buf.WriteString(strconv.FormatInt(p.after, 10))
	}
	out.buf.WriteString("}\n")
	out.end()
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
//
// A stream cannot pin the server: it holds one page of the log at a time
// (see pager); every write must finish within server.stream_write_timeout,
// or the reader is taken to have stalled and the stream is dropped (the
// client resumes with Last-Event-ID); and at most server.max_streams are
// open, shared fairly among API keys, server.max_streams_per_session of
// them for one session (beyond: 503 and 429; see streamSlots).
func (s *Server) stream(w http.ResponseWriter, r *http.Request, sess session.Session) error {
	after, e := seqParam("after", r.URL.Query().Get("after"))
	if e != nil {
		return e
	}
	if _, ok := r.Header["Last-Event-Id"]; ok {
		if after, e = seqParam("Last-Event-ID", r.Header.Get("Last-Event-ID")); e != nil {
			return e
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	evicted := make(chan struct{})
	release, e := s.streamSlots.acquire(sess.ID, tenant(r.Context()), sync.OnceFunc(func() { close(evicted); cancel() }))
	if e != nil {
		w.Header().Set("Retry-After", "5")
		return e
	}
	defer release()
	defer context.AfterFunc(s.stopCtx, cancel)()
	defer func() {
		select {
		case <-evicted:
			s.log.Info("event stream ended for another API key's (server.max_streams is full; it can resume with Last-Event-ID)", "session", sess.ID)
		default:
		}
	}()

	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	sw := &streamWriter{w: w, rc: rc, timeout: s.cfg.StreamWriteTimeout}
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(sw)
	flush := func() bool {
		if bw.Flush() == nil && sw.flush() == nil {
			return true
		}
		if sw.stalled {
			s.metrics.streamsDropped.Inc()
			s.log.Warn("event stream dropped: the reader did not take a write within server.stream_write_timeout (it can resume with Last-Event-ID)",
				"session", sess.ID, "after", after, "timeout", s.cfg.StreamWriteTimeout)
		}
		return false
	}
	sw.begin()
	bw.WriteString(": session " + sess.ID + "\n\n")
	if !flush() {
		return nil
	}
	s.metrics.streams.Inc()
	defer s.metrics.streams.Dec()

	p := newPager(s, sess.ID, after)
	for {
		events, full, err := p.next(ctx, 0)
		if err != nil {
			s.endStream(ctx, sess.ID, err)
			return nil
		}
		if len(events) > 0 {
			sw.begin()
		}
		for _, ev := range events {
			data, err := marshal(ev)
			if err != nil {
				s.log.Error("event stream: encode event", "session", sess.ID, "seq", ev.Seq, "err", err)
				return nil
			}
			bw.WriteString("id: " + strconv.FormatInt(ev.Seq, 10) + "\nevent: " + oneLine(ev.Type) + "\ndata: ")
			bw.Write(data) // one line: marshal ends it with the newline
			bw.WriteString("\n")
			if sw.err != nil {
				break
			}
		}
		if len(events) > 0 {
			after = p.after
			if !flush() {
				return nil
			}
			if full {
				continue
			}
		}
		switch s.waitEvents(ctx, sess.ID, after) {
		case waitIdle:
			sw.begin()
			bw.WriteString(": heartbeat\n\n")
			if !flush() {
				return nil
			}
		case waitEnd:
			return nil
		}
	}
}

// streamWriter writes an event stream's bytes. Each batch (the events of
// one page, a heartbeat) starts with begin, which gives the whole batch, up
// to its flush, the write timeout to reach the client: a reader that does
// not take a page within it has stalled. The first error sticks; stalled
// reports that it was the deadline.
type streamWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	err     error
	stalled bool
}

// begin starts a batch. A writer that supports no deadline (a test
// recorder) writes without.
func (sw *streamWriter) begin() {
	_ = sw.rc.SetWriteDeadline(time.Now().Add(sw.timeout))
}

func (sw *streamWriter) Write(b []byte) (int, error) {
	if sw.err != nil {
		return 0, sw.err
	}
	n, err := sw.w.Write(b)
	sw.fail(err)
	return n, err
}

func (sw *streamWriter) flush() error {
	if sw.err == nil {
		sw.fail(sw.rc.Flush())
	}
	return sw.err
}

func (sw *streamWriter) fail(err error) {
	if err == nil || sw.err != nil {
		return
	}
	sw.err = err
	sw.stalled = errors.Is(err, os.ErrDeadlineExceeded)
}

// streamSlots counts the open event streams: in all, in a pool shared
// fairly among API keys (admission.Pool: when all are open, a key under its
// share ends the oldest stream of the key most over its share, whose client
// resumes with Last-Event-ID), and per session.
type streamSlots struct {
	pool       *admission.Pool
	perSession int

	mu        sync.Mutex
	bySession map[string]int // guarded by mu
}

func newStreamSlots(max, perSession int) *streamSlots {
	return &streamSlots{pool: admission.NewPool("server.max_streams", max), perSession: perSession, bySession: map[string]int{}}
}

// acquire takes a stream slot for a session of tenant, or refuses: 429
// when the session has its share open, 503 when the pool has no room for
// the tenant. evict ends the stream when another key takes its slot.
func (l *streamSlots) acquire(id, tenant string, evict func()) (release func(), e *apiError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bySession[id] >= l.perSession {
		return nil, errorf(http.StatusTooManyRequests, CodeTooManyStreams,
			"session %q already has %d event streams open (server.max_streams_per_session); close one, or resume it with Last-Event-ID", id, l.perSession)
	}
	slot, err := l.pool.Take(tenant, evict)
	if err != nil {
		return nil, errorf(http.StatusServiceUnavailable, CodeOverloaded, "event streams: %v; retry later", err)
	}
	l.bySession[id]++
	var once sync.Once
	return func() {
		once.Do(func() {
			slot.Release()
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.bySession[id]--; l.bySession[id] == 0 {
				delete(l.bySession, id)
			}
		})
	}, nil
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
