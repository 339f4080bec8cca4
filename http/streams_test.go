package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// appendBlobs appends n events of about size bytes each to a session.
func appendBlobs(t *testing.T, ts *testServer, id string, n, size int) {
	t.Helper()
	blob := strings.Repeat("x", size)
	var batch []session.Event
	for i := 0; i < n; i++ {
		ev, err := session.NewEvent("test/blob", map[string]any{"i": i, "blob": blob})
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, ev)
		if len(batch) == 64 || i == n-1 {
			if _, err := ts.app.Store.Append(context.Background(), id, batch...); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
}

type eventsPageJSON struct {
	Events []struct {
		Seq int64 `json:"seq"`
	} `json:"events"`
	More bool `json:"more"`
}

// TestEventsArePaged: the JSON form answers at most 1000 events by default
// (limit, up to 10000, changes it) and about 8 MiB, saying "more" when it
// stopped short; following the pages reads the whole log once.
func TestEventsArePaged(t *testing.T) {
	ts := newTestServer(t, "")
	id := ts.newSession("", "")
	appendBlobs(t, ts, id, 1500, 10)
	page := func(query string) eventsPageJSON {
		t.Helper()
		resp, b := ts.get("/v1/sessions/" + id + "/events" + query)
		return decode[eventsPageJSON](t, resp, b, http.StatusOK)
	}
	p := page("")
	if len(p.Events) != 1000 || !p.More || p.Events[999].Seq != 1000 {
		t.Fatalf("first page: %d events, more %v", len(p.Events), p.More)
	}
	if p = page("?after=1000"); len(p.Events) != 500 || p.More || p.Events[0].Seq != 1001 {
		t.Fatalf("second page: %d events, more %v", len(p.Events), p.More)
	}
	if p = page("?limit=1500"); len(p.Events) != 1500 || p.More {
		t.Fatalf("limit=1500: %d events, more %v", len(p.Events), p.More)
	}
	if p = page("?after=1499&limit=1"); len(p.Events) != 1 || p.More {
		t.Fatalf("the last: %d events, more %v", len(p.Events), p.More)
	}

	big := ts.newSession("", "")
	appendBlobs(t, ts, big, 24, 512<<10)
	var seen []int64
	after := int64(0)
	for pages := 0; ; pages++ {
		resp, b := ts.get(fmt.Sprintf("/v1/sessions/%s/events?after=%d", big, after))
		if len(b) > maxEventsPageBytes+pageBytes+1<<20 {
			t.Fatalf("a page of %d MiB", len(b)>>20)
		}
		p := decode[eventsPageJSON](t, resp, b, http.StatusOK)
		for _, e := range p.Events {
			seen = append(seen, e.Seq)
			after = e.Seq
		}
		if !p.More {
			if pages < 1 {
				t.Fatalf("12 MiB of events came in %d pages", pages+1)
			}
			break
		}
	}
	if len(seen) != 24 || seen[23] != 24 {
		t.Fatalf("read %v", seen)
	}
}

// pageSpy records what the pager asked the store and what it got.
type pageSpy struct {
	session.Store
	mu    sync.Mutex
	sizes []int // bytes of each page read
}

func (s *pageSpy) Events(ctx context.Context, id string, after int64, limit int) ([]session.Event, error) {
	events, err := s.Store.Events(ctx, id, after, limit)
	s.mu.Lock()
	s.sizes = append(s.sizes, eventBytes(events))
	s.mu.Unlock()
	return events, err
}

// TestPagesAreBounded: from a store that does not bound reads by bytes (the
// spy is not a session.BoundedReader), a read of a log takes pages of at
// most pageEvents events and, once it has seen large events, about
// pageBytes; the log of a session is never loaded whole (here by /messages,
// over 24 MiB of log).
func TestPagesAreBounded(t *testing.T) {
	spy := &pageSpy{Store: session.NewMemory()}
	ts := newTestServer(t, "", func(su *serverSetup) { su.store = spy })
	id := ts.newSession("", "")
	ts.runOK(map[string]any{"code": "return (await tools.math_add({a: 1, b: 2})).sum", "session_id": id})
	appendBlobs(t, ts, id, 48, 512<<10)
	ts.runOK(map[string]any{"code": "return 2", "session_id": id})
	spy.mu.Lock()
	spy.sizes = nil
	spy.mu.Unlock()

	resp, b := ts.get("/v1/sessions/" + id + "/messages")
	msgs := decode[struct{ Messages []session.Message }](t, resp, b, http.StatusOK).Messages
	if len(msgs) != 4 || msgs[0].Role != session.RoleAssistant || msgs[3].Role != session.RoleTool {
		t.Fatalf("messages %+v", msgs)
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if len(spy.sizes) < 6 {
		t.Fatalf("24 MiB of log read in %d pages", len(spy.sizes))
	}
	for i, n := range spy.sizes {
		if n > pageEvents*(512<<10)+64<<10 || (i > 1 && n > pageBytes+64<<10) {
			t.Fatalf("page %d held %d KiB (pages %v)", i, n>>10, spy.sizes)
		}
	}
}

// boundedSpy is a pageSpy over a store that bounds reads by bytes.
type boundedSpy struct {
	*pageSpy
	br     session.BoundedReader
	limits []int
}

func (s *boundedSpy) EventsWithin(ctx context.Context, id string, after int64, limit, maxBytes int) ([]session.Event, error) {
	events, err := s.br.EventsWithin(ctx, id, after, limit, maxBytes)
	s.mu.Lock()
	s.sizes = append(s.sizes, eventBytes(events))
	s.limits = append(s.limits, limit)
	s.mu.Unlock()
	return events, err
}

// TestBoundedPagesAreBounded: from a store that bounds reads by bytes, a
// read of a log takes pages of thousands of small events, and of about
// pageBytes (one event more at most) when events are large, whichever
// comes first: /messages of thousands of small events in a page or two,
// and of 24 MiB of large ones in pages of 4 MiB.
func TestBoundedPagesAreBounded(t *testing.T) {
	mem := session.NewMemory()
	spy := &boundedSpy{pageSpy: &pageSpy{Store: mem}, br: mem}
	ts := newTestServer(t, "", func(su *serverSetup) { su.store = spy })
	id := ts.newSession("", "")
	appendBlobs(t, ts, id, 5000, 10)
	ts.runOK(map[string]any{"code": "return (await tools.math_add({a: 1, b: 2})).sum", "session_id": id})
	read := func() (sizes []int) {
		t.Helper()
		spy.mu.Lock()
		spy.sizes, spy.limits = nil, nil
		spy.mu.Unlock()
		resp, b := ts.get("/v1/sessions/" + id + "/messages")
		if msgs := decode[struct{ Messages []session.Message }](t, resp, b, http.StatusOK).Messages; len(msgs) == 0 {
			t.Fatalf("no messages: %s", b)
		}
		spy.mu.Lock()
		defer spy.mu.Unlock()
		// Both reads record a size; only EventsWithin records a limit.
		if len(spy.limits) == 0 || len(spy.limits) != len(spy.sizes) {
			t.Fatalf("the pager read %d pages, %d through EventsWithin", len(spy.sizes), len(spy.limits))
		}
		for _, l := range spy.limits {
			if l != boundedPageEvents {
				t.Fatalf("page limits %v, want %d each", spy.limits, boundedPageEvents)
			}
		}
		return slices.Clone(spy.sizes)
	}
	if sizes := read(); len(sizes) > 3 {
		t.Fatalf("5,000 small events read in %d pages: %v", len(sizes), sizes)
	}
	appendBlobs(t, ts, id, 48, 512<<10)
	sizes := read()
	if len(sizes) < 6 {
		t.Fatalf("24 MiB of log read in %d pages", len(sizes))
	}
	for i, n := range sizes {
		if n > pageBytes+512<<10+64<<10 {
			t.Fatalf("page %d held %d KiB (pages %v)", i, n>>10, sizes)
		}
	}
}

// rawStream opens an event stream on a plain connection and returns it
// unread: a reader that stalls.
func rawStream(t *testing.T, ts *testServer, id string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4 << 10)
	}
	fmt.Fprintf(conn, "GET /v1/sessions/%s/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", id)
	return conn
}

// TestStalledStreamIsDropped: a reader that stops reading a stream with more
// to send is dropped once a write waits past server.stream_write_timeout,
// and the slot and memory it held are freed; it can resume from the last
// event it saw, with Last-Event-ID.
func TestStalledStreamIsDropped(t *testing.T) {
	ts := newTestServer(t, "server: {stream_write_timeout: 300ms}")
	id := ts.newSession("", "")
	appendBlobs(t, ts, id, 32, 512<<10)
	stalled := rawStream(t, ts, id)
	testkit.Eventually(t, "the stream to open", func() bool { return ts.streams() == 1 })
	testkit.Eventually(t, "the stalled stream to be dropped", func() bool { return ts.streams() == 0 })
	if got := metricValue(ts.srv.metrics.streamsDropped); got != 1 {
		t.Fatalf("%v streams counted as dropped", got)
	}
	if !strings.Contains(ts.logs.String(), "event stream dropped") {
		t.Fatalf("no log of the drop:\n%s", ts.logs)
	}
	// The reader reconnects and resumes after the last event it saw.
	stalled.Close()
	stream := ts.openStream("/v1/sessions/"+id+"/events", map[string]string{"Last-Event-ID": "3"})
	ev, ok := stream.next()
	if !ok || ev.event != "test/blob" || ev.id != "4" {
		t.Fatalf("resumed stream: id %q, type %q, %v", ev.id, ev.event, ok)
	}
}

// TestStreamSlots: a session may hold server.max_streams_per_session
// streams (beyond: 429 TOO_MANY_STREAMS), the server server.max_streams
// (beyond: 503 OVERLOADED); a closed stream frees its slot.
func TestStreamSlots(t *testing.T) {
	ts := newTestServer(t, "server: {max_streams: 3, max_streams_per_session: 2}")
	a, b, c := ts.newSession("", ""), ts.newSession("", ""), ts.newSession("", "")
	first := ts.openStream("/v1/sessions/"+a+"/events", nil)
	ts.openStream("/v1/sessions/"+a+"/events", nil)
	try := func(id string) (*http.Response, []byte) {
		return ts.do(request{method: http.MethodGet, path: "/v1/sessions/" + id + "/events", header: map[string]string{"Accept": "text/event-stream"}})
	}
	resp, body := try(a)
	if msg := wantError(t, resp, body, http.StatusTooManyRequests, CodeTooManyStreams); !strings.Contains(msg, "server.max_streams_per_session") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("message %q, Retry-After %q", msg, resp.Header.Get("Retry-After"))
	}
	ts.openStream("/v1/sessions/"+b+"/events", nil)
	resp, body = try(c)
	if msg := wantError(t, resp, body, http.StatusServiceUnavailable, CodeOverloaded); !strings.Contains(msg, "server.max_streams") {
		t.Fatalf("message %q", msg)
	}
	// The JSON form is not a stream.
	if resp, body := ts.get("/v1/sessions/" + c + "/events"); resp.StatusCode != http.StatusOK {
		t.Fatalf("JSON events: %d %s", resp.StatusCode, body)
	}
	first.close()
	testkit.Eventually(t, "the closed stream's slot", func() bool {
		resp, err := ts.send(request{method: http.MethodGet, path: "/v1/sessions/" + c + "/events", header: map[string]string{"Accept": "text/event-stream"}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// failingPages is a store whose Events fails from its fail-th call on.
type failingPages struct {
	session.Store
	mu    sync.Mutex
	calls int
	fail  int
}

func (s *failingPages) Events(ctx context.Context, id string, after int64, limit int) ([]session.Event, error) {
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	if s.fail > 0 && n >= s.fail {
		return nil, errors.New("the disk is gone")
	}
	return s.Store.Events(ctx, id, after, limit)
}

// pagesServer returns a test server on a failingPages store with two
// sessions: short, of 3 steps of 10 bytes, and long, of 600 steps of 500
// bytes (1,200 events, about 400 KB of messages, in pages of 16 events).
func pagesServer(t *testing.T) (st *failingPages, ts *testServer, short, long string) {
	t.Helper()
	st = &failingPages{Store: session.NewMemory()}
	ts = newTestServer(t, "", func(su *serverSetup) { su.store = st })
	short, long = ts.newSession("", ""), ts.newSession("", "")
	appendSteps(t, st, short, 3, 10)
	appendSteps(t, st, long, 600, 500)
	return st, ts, short, long
}

// wantWhole checks that GET path replies want whole, with its length.
func wantWhole(t *testing.T, ts *testServer, path string, want []byte) {
	t.Helper()
	resp, b := ts.get(path)
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(b)) || !bytes.Equal(b, want) {
		t.Fatalf("%s: %d, length %d, body\n%s\nwant\n%s", path, resp.StatusCode, resp.ContentLength, b, want)
	}
}

// wantNoPartialList checks GET path, a long list, when st fails: before the
// first chunk is sent, with an error reply; after it, with the connection
// cut, so that no client takes a partial list for the whole.
func wantNoPartialList(t *testing.T, st *failingPages, ts *testServer, path string) {
	t.Helper()
	failFrom := func(n int) {
		st.mu.Lock()
		st.calls, st.fail = 0, n
		st.mu.Unlock()
	}
	failFrom(1)
	resp, b := ts.get(path)
	wantError(t, resp, b, http.StatusServiceUnavailable, CodeStoreUnavailable)

	failFrom(40) // 39 pages of 16 events: past the first 64 KiB chunk
	resp, err := ts.send(request{method: http.MethodGet, path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || err == nil || json.Valid(body) {
		t.Fatalf("a failure after the first chunk: status %d, read %d bytes, error %v, valid JSON %v", resp.StatusCode, len(body), err, json.Valid(body))
	}
}

// appendSteps appends n steps of one call and its result of size bytes.
func appendSteps(t *testing.T, st session.Store, id string, n, size int) {
	t.Helper()
	text := strings.Repeat("y", size)
	var batch []session.Event
	for i := range n {
		callID := fmt.Sprintf("c%d", i)
		call, err := session.NewEvent(session.TypeToolCall, session.ToolCall{Turn: 1, Step: i + 1, CallID: callID, Name: "util_echo", Arguments: `{"value":1}`})
		if err != nil {
			t.Fatal(err)
		}
		result, err := session.NewEvent(session.TypeToolResult, session.ToolResult{CallID: callID, Result: session.Result{Content: []registry.ContentBlock{registry.Text(text)}}})
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, call, result)
		if len(batch) >= 64 || i == n-1 {
			if _, err := st.Append(context.Background(), id, batch...); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
}

// /messages sends its messages as they settle: a long conversation in
// chunks (no length), byte for byte what encoding the whole list gives; a
// short one whole, with its length.
func TestMessagesAreSentAsTheySettle(t *testing.T) {
	st, ts, short, long := pagesServer(t)
	whole := func(id string) []byte {
		t.Helper()
		events, err := st.Store.Events(context.Background(), id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		msgs := session.Messages(events)
		if msgs == nil {
			msgs = []session.Message{}
		}
		data, err := marshal(struct {
			Messages []session.Message `json:"messages"`
		}{msgs})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	wantWhole(t, ts, "/v1/sessions/"+short+"/messages", whole(short))
	resp, b := ts.get("/v1/sessions/" + long + "/messages")
	if resp.StatusCode != http.StatusOK || resp.ContentLength != -1 || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("long: %d, length %d, %v", resp.StatusCode, resp.ContentLength, resp.Header)
	}
	if !bytes.Equal(b, whole(long)) {
		t.Fatalf("long: %d bytes, not the %d bytes of the whole list", len(b), len(whole(long)))
	}
	empty := ts.newSession("", "")
	if _, b := ts.get("/v1/sessions/" + empty + "/messages"); string(b) != "{\"messages\":[]}\n" {
		t.Fatalf("empty: %s", b)
	}
}

// A store that fails before the first chunk of /messages is sent gets an
// error reply; one that fails after it cuts the connection, so that no
// client takes a partial list for the whole.
func TestMessagesFailuresAreNotPartialLists(t *testing.T) {
	st, ts, _, long := pagesServer(t)
	wantNoPartialList(t, st, ts, "/v1/sessions/"+long+"/messages")
}

// A large /events page is sent as it is read (chunked, no length), byte
// for byte what encoding the whole page gives; a small one whole, with its
// length. A store that fails before the first chunk gets an error reply;
// after it, the connection is cut.
func TestEventsPageIsSentAsItIsRead(t *testing.T) {
	st, ts, short, long := pagesServer(t)
	whole := func(id string, after int64, limit int) []byte {
		t.Helper()
		events, err := st.Store.Events(context.Background(), id, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		more := len(events) > limit
		events = events[:min(limit, len(events))]
		resp := struct {
			Events    []session.Event `json:"events"`
			More      bool            `json:"more"`
			NextAfter int64           `json:"next_after,omitempty"`
		}{Events: append([]session.Event{}, events...), More: more}
		if more {
			resp.NextAfter = events[len(events)-1].Seq
		}
		data, err := marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	wantWhole(t, ts, "/v1/sessions/"+short+"/events", whole(short, 0, 1000))
	for _, q := range []struct {
		query        string
		after, limit int
	}{{"", 0, 1000}, {"?after=7&limit=1193", 7, 1193}, {"?after=1100", 1100, 1000}} {
		resp, b := ts.get("/v1/sessions/" + long + "/events" + q.query)
		want := whole(long, int64(q.after), q.limit)
		if chunked := len(want) > listChunk; resp.StatusCode != http.StatusOK || (resp.ContentLength == -1) != chunked {
			t.Fatalf("long%s: %d, length %d for %d bytes", q.query, resp.StatusCode, resp.ContentLength, len(want))
		}
		if !bytes.Equal(b, want) {
			t.Fatalf("long%s: %d bytes, not the %d bytes of the whole page", q.query, len(b), len(want))
		}
	}

	wantNoPartialList(t, st, ts, "/v1/sessions/"+long+"/events")
}
