package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/codemode/codemode/internal/version"
	"github.com/codemode/codemode/mcp"
)

// readyJSON is GET /readyz.
type readyJSON struct {
	Status string           `json:"status"`
	Checks map[string]Check `json:"checks"`
}

func TestHealthAndReadiness(t *testing.T) {
	ups := fakeUpstreams{
		{Name: "files", Scope: "default", State: mcp.StateReady},
		{Name: "flaky", Scope: "default", State: mcp.StateFailed, LastError: "connection refused"},
	}
	ts := newTestServer(t, "", func(su *serverSetup) { su.opts.Upstreams = ups })
	resp, b := ts.get("/readyz")
	got := decode[readyJSON](t, resp, b, http.StatusServiceUnavailable)
	if got.Status != "not_ready" || !got.Checks["store"].OK || !got.Checks["server"].OK || !got.Checks["upstream:files"].OK {
		t.Fatalf("readyz with a failed upstream: %s", b)
	}
	if c := got.Checks["upstream:flaky"]; c.OK || !strings.Contains(c.Detail, "failed: connection refused") {
		t.Errorf("the failed upstream's check: %+v", c)
	}

	ts = newTestServer(t, "")
	resp, b = ts.get("/readyz")
	if got := decode[readyJSON](t, resp, b, http.StatusOK); got.Status != "ready" || len(got.Checks) != 2 || !got.Checks["store"].OK {
		t.Fatalf("readyz: %s", b)
	}
	// A store that does not answer: not ready, yet alive.
	if err := ts.app.Store.Close(); err != nil {
		t.Fatal(err)
	}
	resp, b = ts.get("/readyz")
	if got := decode[readyJSON](t, resp, b, http.StatusServiceUnavailable); got.Checks["store"].OK || got.Checks["store"].Detail == "" {
		t.Errorf("readyz with the store closed: %s", b)
	}
	resp, b = ts.get("/healthz")
	if decode[map[string]string](t, resp, b, http.StatusOK)["status"] != "ok" {
		t.Errorf("healthz: %s", b)
	}
	// Shutting down: not ready.
	ts.srv.stop()
	resp, b = ts.get("/readyz")
	if got := decode[readyJSON](t, resp, b, http.StatusServiceUnavailable); got.Checks["server"].OK {
		t.Errorf("readyz while stopping: %s", b)
	}
}

func TestRequestID(t *testing.T) {
	ts := newTestServer(t, "")
	get := func(path, id string) *http.Response {
		t.Helper()
		h := map[string]string{}
		if id != "" {
			h["X-Request-Id"] = id
		}
		resp, _ := ts.do(request{method: http.MethodGet, path: path, header: h})
		return resp
	}
	if got := get("/healthz", "client-id-1").Header.Get("X-Request-Id"); got != "client-id-1" {
		t.Errorf("a valid X-Request-Id is echoed as %q", got)
	}
	seen := map[string]bool{}
	for _, bad := range []string{"", "has space", strings.Repeat("x", 129), "caf\u00e9"} {
		got := get("/healthz", bad).Header.Get("X-Request-Id")
		if got == "" || got == bad || seen[got] || strings.ContainsAny(got, " \u00e9") {
			t.Errorf("X-Request-Id %q: answered %q, want a fresh one", bad, got)
		}
		seen[got] = true
	}
	if s := get("/healthz", "").Header.Get("Server"); s != "codemode/"+version.String() {
		t.Errorf("Server header %q", s)
	}

	// Error bodies name it.
	resp, b := ts.do(request{method: http.MethodGet, path: "/v1/sessions/nope", header: map[string]string{"X-Request-Id": "req-404"}})
	var e struct {
		Error struct {
			Code      string `json:"code"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != 404 || e.Error.RequestID != "req-404" || e.Error.Code != CodeUnknownSession {
		t.Errorf("error body %s", b)
	}
	// The access log line.
	if logs := ts.logs.Containing(`status=404`); !strings.Contains(logs, `msg="http request" method=GET path=/v1/sessions/nope route=/v1/sessions/{id} status=404`) ||
		!strings.Contains(logs, "request_id=req-404 remote=127.0.0.1:") {
		t.Errorf("no access log line for the 404:\n%s", logs)
	}

	// A run: its log line and its tool/call event carry the id.
	resp, b = ts.do(request{method: http.MethodPost, path: "/v1/run", body: `{"code": "return 1"}`, header: map[string]string{"X-Request-Id": "req-run"}})
	res := decode[runResult](t, resp, b, http.StatusOK)
	if logs := ts.logs.Containing(`msg=run request_id=req-run session=` + res.SessionID); !strings.Contains(logs, `msg=run request_id=req-run session=`+res.SessionID) {
		t.Errorf("the run's log line lacks its request id:\n%s", logs)
	}
	if !strings.Contains(ts.logs.Containing("status=200 duration="), "status=200 duration=") {
		t.Error("the access log line lacks status or duration")
	}
	resp, b = ts.get("/v1/sessions/" + res.SessionID + "/events")
	events := decode[struct {
		Events []map[string]any `json:"events"`
	}](t, resp, b, http.StatusOK).Events
	if len(events) == 0 || events[0]["type"] != "tool/call" || events[0]["request_id"] != "req-run" {
		t.Errorf("the run's tool/call does not carry its request id: %s", b)
	}
}

// sessionsJSON is GET /v1/sessions.
type sessionsJSON struct {
	Sessions   []sessionJSON `json:"sessions"`
	NextCursor *string       `json:"next_cursor"`
}

func TestListAndDeleteSessions(t *testing.T) {
	ts := newTestServer(t, scopesYAML)
	var ids []string // newest last
	for _, scope := range []string{"", "", "readonly", ""} {
		ids = append(ids, ts.newSession(scope, ""))
	}
	list := func(query string) sessionsJSON {
		t.Helper()
		resp, b := ts.get("/v1/sessions" + query)
		return decode[sessionsJSON](t, resp, b, http.StatusOK)
	}
	// Every page, newest first, following next_cursor to the end.
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > len(ids) {
			t.Fatal("the listing does not end")
		}
		p := list("?limit=3&cursor=" + url.QueryEscape(cursor))
		if len(p.Sessions) > 3 {
			t.Fatalf("page of %d sessions at limit 3", len(p.Sessions))
		}
		for _, s := range p.Sessions {
			got = append(got, s.ID)
		}
		if p.NextCursor == nil {
			break
		}
		if *p.NextCursor == "" {
			t.Fatal("an empty next_cursor: want it omitted on the last page")
		}
		cursor = *p.NextCursor
	}
	want := []string{ids[3], ids[2], ids[1], ids[0]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	if p := list("?scope=readonly"); len(p.Sessions) != 1 || p.Sessions[0].ID != ids[2] || p.Sessions[0].Scope != "readonly" || p.NextCursor != nil {
		t.Errorf("scope=readonly: %+v", p)
	}
	// A listed session has the shape of GET /v1/sessions/{id}.
	resp, b := ts.get("/v1/sessions/" + ids[2])
	if one := decode[sessionJSON](t, resp, b, http.StatusOK); one != list("?scope=readonly").Sessions[0] {
		t.Errorf("GET %s = %+v, listed as %+v", ids[2], one, list("?scope=readonly").Sessions[0])
	}
	for _, q := range []string{"?cursor=bm90LWEtY3Vyc29y", "?cursor=%25%25", "?limit=0", "?limit=x", "?limit=-1"} {
		resp, b := ts.get("/v1/sessions" + q)
		wantError(t, resp, b, http.StatusBadRequest, CodeInvalidRequest)
	}

	// Delete: 204, then gone; again 404.
	del := func(id string) (*http.Response, []byte) {
		return ts.do(request{method: http.MethodDelete, path: "/v1/sessions/" + id})
	}
	if resp, b := del(ids[0]); resp.StatusCode != http.StatusNoContent || len(b) != 0 {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, b)
	}
	resp, b = ts.get("/v1/sessions/" + ids[0])
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownSession)
	resp, b = del(ids[0])
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownSession)
	if p := list(""); len(p.Sessions) != 3 {
		t.Errorf("after a delete, %d sessions listed", len(p.Sessions))
	}
}

func TestListSessionsWithKeys(t *testing.T) {
	const keyC = "secret-key-c" // scopes: default, readonly
	ts := newTestServer(t, keysYAML+fmt.Sprintf("  - {sha256: %s, scopes: [default, readonly]}\n", digest(keyC)))
	// A session in a scope no key has, created by key A's run in... none
	// can: create it directly.
	other, err := ts.app.NewSession(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	a := ts.newSession("", keyA)
	b := ts.newSession("readonly", keyB)
	list := func(key, query string) []string {
		t.Helper()
		resp, body := ts.do(request{method: http.MethodGet, path: "/v1/sessions" + query, key: key})
		var ids []string
		for _, s := range decode[sessionsJSON](t, resp, body, http.StatusOK).Sessions {
			ids = append(ids, s.ID)
		}
		return ids
	}
	if got := list(keyA, ""); fmt.Sprint(got) != fmt.Sprint([]string{a}) {
		t.Errorf("key A lists %v, want %v", got, []string{a})
	}
	if got := list(keyB, ""); fmt.Sprint(got) != fmt.Sprint([]string{b}) {
		t.Errorf("key B lists %v, want %v", got, []string{b})
	}
	if got := list(keyC, ""); fmt.Sprint(got) != fmt.Sprint([]string{b, a}) {
		t.Errorf("key C lists %v, want %v (not %s)", got, []string{b, a}, other.ID)
	}
	// A scope the key may not use is a 404 like one that does not exist.
	resp, body := ts.do(request{method: http.MethodGet, path: "/v1/sessions?scope=readonly", key: keyA})
	wantError(t, resp, body, http.StatusNotFound, CodeUnknownScope)
	// Nor can it delete another key's session.
	resp, body = ts.do(request{method: http.MethodDelete, path: "/v1/sessions/" + b, key: keyA})
	wantError(t, resp, body, http.StatusNotFound, CodeUnknownSession)
	if got := list(keyB, ""); len(got) != 1 {
		t.Errorf("key A deleted key B's session: %v", got)
	}
}

func TestEventsPages(t *testing.T) {
	ts := newTestServer(t, "")
	res := ts.runOK(map[string]any{"code": "await tools.math_add({a: 1, b: 2}); return 1"})
	type page struct {
		Events    []eventJSON `json:"events"`
		More      bool        `json:"more"`
		NextAfter *int64      `json:"next_after"`
	}
	get := func(query string) page {
		t.Helper()
		resp, b := ts.get("/v1/sessions/" + res.SessionID + "/events" + query)
		return decode[page](t, resp, b, http.StatusOK)
	}
	all := get("")
	if len(all.Events) < 3 || all.More || all.NextAfter != nil {
		t.Fatalf("the whole log in one default page: %+v", all)
	}
	var seqs []int64
	after := "0"
	for range len(all.Events) + 1 {
		p := get("?limit=2&after=" + after)
		for _, e := range p.Events {
			seqs = append(seqs, e.Seq)
		}
		if !p.More {
			if p.NextAfter != nil {
				t.Errorf("the last page names a next page: %+v", p)
			}
			break
		}
		if p.NextAfter == nil || *p.NextAfter != p.Events[len(p.Events)-1].Seq {
			t.Fatalf("a page with more does not say where the next starts: %+v", p)
		}
		after = fmt.Sprint(*p.NextAfter)
	}
	if len(seqs) != len(all.Events) || seqs[0] != 1 || seqs[len(seqs)-1] != all.Events[len(all.Events)-1].Seq {
		t.Errorf("paging read seqs %v of %d events", seqs, len(all.Events))
	}
}

func TestRunSessions(t *testing.T) {
	ts := newTestServer(t, "")
	// Without a session, a run creates one, and it stays.
	res := ts.runOK(map[string]any{"code": "return 1"})
	resp, b := ts.get("/v1/sessions/" + res.SessionID)
	if s := decode[sessionJSON](t, resp, b, http.StatusOK); s.LastSeq < 2 {
		t.Errorf("the run's session %s", b)
	}

	// Ephemeral: the result comes back, the session does not stay.
	resp, b = ts.post("/v1/run", `{"code": "return 41 + 1", "ephemeral": true}`)
	var eph struct {
		runResult
		SessionDeleted bool `json:"session_deleted"`
	}
	eph.runResult = decode[runResult](t, resp, b, http.StatusOK)
	if err := json.Unmarshal(b, &eph); err != nil {
		t.Fatal(err)
	}
	if string(eph.result(t)) != "42" || !eph.SessionDeleted || eph.SessionID == "" {
		t.Fatalf("ephemeral run: %s", b)
	}
	resp, b = ts.get("/v1/sessions/" + eph.SessionID)
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownSession)
	if strings.Contains(string(mustGet(t, ts, "/v1/sessions")), eph.SessionID) {
		t.Error("the ephemeral session is listed")
	}
	// A failed ephemeral run goes too.
	resp, b = ts.post("/v1/run", `{"code": "throw new Error('no')", "ephemeral": true}`)
	if r := decode[runResult](t, resp, b, http.StatusOK); !r.IsError || !strings.Contains(string(b), `"session_deleted":true`) {
		t.Errorf("failed ephemeral run: %s", b)
	}
	// A non-ephemeral reply does not mention it.
	if strings.Contains(string(mustPost(t, ts, "/v1/run", `{"code": "return 1"}`)), "session_deleted") {
		t.Error("session_deleted in a reply whose session stays")
	}
	// Ephemeral never deletes a session the client named.
	resp, b = ts.post("/v1/run", fmt.Sprintf(`{"code": "return 1", "session_id": %q, "ephemeral": true}`, res.SessionID))
	wantError(t, resp, b, http.StatusBadRequest, CodeInvalidRequest)
	resp, _ = ts.get("/v1/sessions/" + res.SessionID)
	if resp.StatusCode != http.StatusOK {
		t.Error("the named session is gone")
	}
}

func mustGet(t *testing.T, ts *testServer, path string) []byte {
	t.Helper()
	resp, b := ts.get(path)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return b
}

func mustPost(t *testing.T, ts *testServer, path string, body any) []byte {
	t.Helper()
	resp, b := ts.post(path, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	return b
}
