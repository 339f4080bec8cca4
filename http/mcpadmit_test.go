package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/mcp"
)

// blockingMCP stands in for the MCP handler: a tools/call waits until release is closed.
type blockingMCP struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blockingMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.NewDecoder(r.Body).Decode(&m)
	if m.Method == "tools/call" {
		b.entered <- struct{}{}
		<-b.release
	}
	writeJSON(w, http.StatusOK, map[string]string{"reached": m.Method})
}

// An MCP tool call takes a run slot (and run_code the run's memory) like a REST run: with the
// one slot taken, a second call is refused with the same 503, while other MCP messages and the
// body the handler reads pass untouched.
func TestMCPToolCallsAreAdmittedLikeRuns(t *testing.T) {
	probe := &blockingMCP{entered: make(chan struct{}, 1), release: make(chan struct{})}
	ts := newTestServer(t, "server: {max_inflight_runs: 1, max_queued_runs: 0}", func(su *serverSetup) { su.opts.MCP = probe })
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"return 1"}}}`
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		resp, body := ts.do(request{method: http.MethodPost, path: "/mcp", body: call})
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"tools/call"`) {
			t.Errorf("first call: %d %s", resp.StatusCode, body)
		}
	}()
	<-probe.entered
	if got := ts.srv.budget.InUse(); got < int64(ts.app.Config.Limits.Memory) {
		t.Errorf("memory in use during a run_code call = %d, want at least limits.memory %d", got, ts.app.Config.Limits.Memory)
	}
	resp, body := ts.do(request{method: http.MethodPost, path: "/mcp", body: strings.Replace(call, `"id":1`, `"id":2`, 1)})
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), CodeOverloaded) || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second call with the slot taken: %d %s", resp.StatusCode, body)
	}
	batch := `[{"jsonrpc":"2.0","id":3,"method":"tools/list"},{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"util_echo"}}]`
	if resp, _ := ts.do(request{method: http.MethodPost, path: "/mcp", body: batch}); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a batch holding a tools/call with the slot taken: %d", resp.StatusCode)
	}
	for _, other := range []string{`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, `not json`} {
		if resp, body := ts.do(request{method: http.MethodPost, path: "/mcp", body: other}); resp.StatusCode != http.StatusOK {
			t.Errorf("%s with the slot taken: %d %s", other, resp.StatusCode, body)
		}
	}
	close(probe.release)
	wg.Wait()
	if got := ts.srv.budget.InUse(); got != 0 {
		t.Errorf("memory in use after the calls = %d", got)
	}
}

func FuzzMCPToolCalls(f *testing.F) {
	for _, s := range []string{`{"method":"tools/call","params":{"name":"run_code"}}`, `[{"method":"tools/call"},1]`, `[`, ` [ ]`, `null`, `{"params":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		calls, runCode := mcpToolCalls(body)
		if runCode && calls == 0 {
			t.Fatalf("run_code without a call: %q", body)
		}
	})
}

// newMCPServer serves /v1 and the real /mcp, logging to ts.logs. With
// linger, each /mcp request's handler returns that long after the MCP
// handler has answered it.
func newMCPServer(t *testing.T, yml string, linger time.Duration) *testServer {
	t.Helper()
	a, logs := newTestApp(t, yml, nil)
	mh := mcp.Handler(a, mcp.HandlerOptions{Logger: discardLogger()})
	t.Cleanup(func() { mh.Close() })
	srv, err := New(a, Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), MCP: lingering{mh, linger}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &testServer{t: t, app: a, srv: srv, url: hs.URL, logs: logs}
}

// lingering is an MCP handler whose requests end linger after their answer.
type lingering struct {
	*mcp.HTTPHandler
	linger time.Duration
}

func (l lingering) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.HTTPHandler.ServeHTTP(w, r)
	time.Sleep(l.linger)
}

// mcpSession initializes an MCP session over /mcp and returns its id.
func (ts *testServer) mcpSession() string {
	ts.t.Helper()
	init := `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}`
	resp, b := ts.do(request{method: http.MethodPost, path: "/mcp", body: init, header: mcpHeader("")})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		ts.t.Fatalf("initialize: %d %s", resp.StatusCode, b)
	}
	if resp, b := ts.do(request{method: http.MethodPost, path: "/mcp", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, header: mcpHeader(sid)}); resp.StatusCode != http.StatusAccepted {
		ts.t.Fatalf("notifications/initialized: %d %s", resp.StatusCode, b)
	}
	return sid
}

func mcpHeader(sid string) map[string]string {
	h := map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18"}
	if sid != "" {
		h["Mcp-Session-Id"] = sid
	}
	return h
}

// A tools/call over /mcp holds its slot and its memory until the call ends,
// not until its request does: the run of a client that leaves goes on (the
// event store keeps its result for a resumed stream), so leaving must not
// let a client start more runs than there are slots.
func TestMCPCallHoldsItsSlotAfterItsClientLeaves(t *testing.T) {
	ts := newMCPServer(t, "server: {max_inflight_runs: 1, max_queued_runs: 0}", 0)
	sid := ts.mcpSession()
	ctx, cancel := context.WithCancel(context.Background())
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"await tools.util_sleep({ms: 60000}); return 1"}}}`
	first := ts.sendAsync(request{method: http.MethodPost, path: "/mcp", body: call, header: mcpHeader(sid), ctx: ctx})
	testkit.Eventually(t, "the call to take the slot", func() bool { return ts.inflight() == 1 })
	testkit.Eventually(t, "the call's run to dispatch its sleep", func() bool { return ts.anyEventMentions("util_sleep") })
	cancel()
	<-first
	ts.settled() // the first request's handler has returned
	if got := ts.inflight(); got != 1 {
		t.Fatalf("in-flight runs after the client left, its run still going: %v, want 1", got)
	}
	if got := ts.srv.budget.InUse(); got < int64(ts.app.Config.Limits.Memory) {
		t.Errorf("memory in use after the client left = %d, want at least limits.memory", got)
	}
	other := ts.mcpSession()
	resp, body := ts.do(request{method: http.MethodPost, path: "/mcp", body: strings.Replace(call, `"id":7`, `"id":8`, 1), header: mcpHeader(other)})
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), CodeOverloaded) {
		t.Errorf("a second call while the first runs on: %d %s", resp.StatusCode, body)
	}
	// Cancelling the call ends its run and frees its slot and memory.
	cancelled := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`
	if resp, b := ts.do(request{method: http.MethodPost, path: "/mcp", body: cancelled, header: mcpHeader(sid)}); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %d %s", resp.StatusCode, b)
	}
	testkit.Eventually(t, "the slot to be free", func() bool { return ts.inflight() == 0 && ts.srv.budget.InUse() == 0 })
}

// anyEventMentions says whether an event of a session in the log mentions s.
func (ts *testServer) anyEventMentions(s string) bool {
	ts.t.Helper()
	_, b := ts.get("/v1/sessions")
	var list struct{ Sessions []struct{ ID string } }
	if err := json.Unmarshal(b, &list); err != nil {
		ts.t.Fatal(err)
	}
	for _, sess := range list.Sessions {
		if _, events := ts.get("/v1/sessions/" + sess.ID + "/events"); strings.Contains(string(events), s) {
			return true
		}
	}
	return false
}

// A ticket releases what its request was admitted with once every call of
// the request has claimed it and is done, or once the request has ended and
// the calls that started are done; a call that claims after its request
// ended, a second claim beyond the request's calls, and a call without a
// ticket (or with one this server did not issue) do not run.
func TestMCPTickets(t *testing.T) {
	var tickets mcpTickets
	released := 0
	header := func(token string) http.Header { return http.Header{mcpTicketHeader: {token}} }
	claim := func(token string) func() {
		t.Helper()
		done, ok := tickets.claim(header(token))
		if !ok {
			t.Fatalf("ticket %s refused a claim", token)
		}
		return done
	}
	refused := func(h http.Header, what string) {
		t.Helper()
		if _, ok := tickets.claim(h); ok {
			t.Errorf("%s: claimed", what)
		}
	}
	check := func(want int, what string) {
		t.Helper()
		if released != want {
			t.Fatalf("%s: released %d times, want %d", what, released, want)
		}
	}

	// A batch of two calls: released when both are done, before the request ends.
	batch := tickets.issue(2, func() { released++ })
	a, b := claim(batch), claim(batch)
	refused(header(batch), "a third claim of a two-call ticket")
	a()
	a() // done is idempotent
	check(0, "one of two calls done")
	b()
	check(1, "both calls done")
	tickets.served(batch)
	check(1, "the request ending after its calls")

	// A request that ends with its call running: released when the call ends.
	left := tickets.issue(1, func() { released++ })
	done := claim(left)
	tickets.served(left)
	check(1, "the request ended, its call running")
	done()
	check(2, "the call done after its request ended")

	// A request that ends before its call starts: released at once, and the
	// late call refused.
	early := tickets.issue(1, func() { released++ })
	tickets.served(early)
	check(3, "the request ended before its call")
	refused(header(early), "a call after its request ended")

	refused(http.Header{}, "a call without a ticket")
	refused(nil, "a call without a header")
	refused(header("999"), "a ticket never issued")
	if len(tickets.open) != 0 {
		t.Errorf("%d tickets left open", len(tickets.open))
	}
}

// Tickets come only from this server: a client's own ticket header is
// dropped from every /mcp request.
func TestMCPTicketsAreNotForged(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	probe := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get(mcpTicketHeader))
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})
	ts := newTestServer(t, "", func(su *serverSetup) { su.opts.MCP = probe })
	forged := map[string]string{mcpTicketHeader: "forged"}
	ts.do(request{method: http.MethodPost, path: "/mcp", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, header: forged})
	ts.do(request{method: http.MethodGet, path: "/mcp", header: forged})
	ts.do(request{method: http.MethodPost, path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"util_echo"}}`, header: forged})
	if len(seen) != 3 || seen[0] != "" || seen[1] != "" || seen[2] == "" || seen[2] == "forged" {
		t.Fatalf("tickets the MCP handler saw: %q, want none, none, and one of the server's", seen)
	}
}

// With one slot, MCP tool calls one after another are all admitted: a
// call's slot is free before its result leaves, however long its request
// takes to end after that.
func TestMCPCallsFollowTheirRelease(t *testing.T) {
	ts := newMCPServer(t, "server: {max_inflight_runs: 1, max_queued_runs: 0}", 20*time.Millisecond)
	sid := ts.mcpSession()
	for i := range 30 {
		name, args := "math_add", `{"a":1,"b":2}`
		if i%2 == 1 {
			name, args = "run_code", `{"code":"return 1"}`
		}
		call := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i+10, name, args)
		// As an MCP client does, act on the result as its event arrives,
		// before the stream ends.
		resp, err := ts.send(request{method: http.MethodPost, path: "/mcp", body: call, header: mcpHeader(sid)})
		if err != nil {
			t.Fatal(err)
		}
		result := ""
		for sc := bufio.NewScanner(resp.Body); result == "" && sc.Scan(); {
			if line := sc.Text(); strings.HasPrefix(line, "data:") && strings.Contains(line, `"result"`) {
				result = line
			}
		}
		if resp.StatusCode != http.StatusOK || result == "" {
			t.Fatalf("call %d (%s): %d, no result event", i, name, resp.StatusCode)
		}
		if got := ts.inflight(); got != 0 {
			t.Fatalf("after call %d's result: %v runs in flight", i, got)
		}
		if got := ts.srv.budget.InUse(); got != 0 {
			t.Fatalf("after call %d's result: %d bytes of memory reserved", i, got)
		}
		resp.Body.Close()
	}
}
