package httpapi

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/mcp"
)

// sharesYAML configures two keys of the default scope, and pools of four.
var sharesYAML = fmt.Sprintf(`
server: {max_streams: 4, max_streams_per_session: 2}
api_keys:
  - {sha256: %s, scopes: [default]}
  - {sha256: %s, scopes: [default]}
`, digest("key-one"), digest("key-two"))

// keyName is the name a key has in logs and metrics.
func keyName(key string) string { return "key:" + digest(key)[:16] }

// TestKeysShareStreams (issue 31, class 7): one key holding every event
// stream does not lock out another: the other takes the first's oldest
// streams (which end; their clients resume with Last-Event-ID) up to its
// share, half the pool; past its share each key is refused; the shares
// are in metrics.
func TestKeysShareStreams(t *testing.T) {
	ts := newTestServer(t, sharesYAML)
	bearer := func(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }
	ones := []string{ts.newSession("", "key-one"), ts.newSession("", "key-one"), ts.newSession("", "key-one")}
	twos := []string{ts.newSession("", "key-two"), ts.newSession("", "key-two")}
	try := func(id, key string) (*http.Response, []byte) {
		return ts.do(request{method: http.MethodGet, path: "/v1/sessions/" + id + "/events", key: key, header: map[string]string{"Accept": "text/event-stream"}})
	}
	var first []*sseReader
	for i := range 4 {
		first = append(first, ts.openStream("/v1/sessions/"+ones[i/2]+"/events", bearer("key-one")))
	}
	resp, body := try(ones[2], "key-one")
	if msg := wantError(t, resp, body, http.StatusServiceUnavailable, CodeOverloaded); !strings.Contains(msg, "its share") {
		t.Fatalf("a fifth stream of one key: %q", msg)
	}
	for range 2 {
		ts.openStream("/v1/sessions/"+twos[0]+"/events", bearer("key-two"))
	}
	resp, body = try(twos[1], "key-two")
	if msg := wantError(t, resp, body, http.StatusServiceUnavailable, CodeOverloaded); !strings.Contains(msg, "holds 2, its share") {
		t.Fatalf("the second key past its share: %q", msg)
	}
	// The first key's two oldest streams ended, and no other.
	for i, r := range first {
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			_, _ = io.Copy(io.Discard, r.resp.Body)
		}()
		if i < 2 {
			<-ended
			continue
		}
		r.close()
		<-ended
	}
	_, metrics := ts.do(request{method: http.MethodGet, path: "/metrics", key: "key-one"})
	for _, want := range []string{
		`codemode_pool_evictions_total{pool="event_streams"} 2`,
		`codemode_pool_held{key="` + keyName("key-two") + `",pool="event_streams"} 2`,
		`codemode_pool_share{pool="event_streams"} `,
		`codemode_pool_size{pool="event_streams"} 4`,
		`codemode_pool_refusals_total{pool="event_streams"} 2`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestKeysShareMCPSessions (issue 31, class 7): one key holding every MCP
// session does not lock out another: the other's initialize closes the
// first key's longest idle session (which is then unknown, 404) up to its
// share; past its share a key is refused with 503.
func TestKeysShareMCPSessions(t *testing.T) {
	a, logs := newTestApp(t, sharesYAML, nil)
	mh := mcp.Handler(a, mcp.HandlerOptions{Logger: discardLogger(), MaxSessions: 4})
	t.Cleanup(func() { mh.Close() })
	srv, err := New(a, Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), MCP: mh})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	ts := &testServer{t: t, app: a, srv: srv, url: hs.URL, logs: logs}

	const init = `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}`
	open := func(key string) (sid string, status int, body string) {
		resp, b := ts.do(request{method: http.MethodPost, path: "/mcp", body: init, header: mcpHeader(""), key: key})
		return resp.Header.Get("Mcp-Session-Id"), resp.StatusCode, string(b)
	}
	ping := func(sid, key string) int {
		resp, _ := ts.do(request{method: http.MethodPost, path: "/mcp", body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: mcpHeader(sid), key: key})
		return resp.StatusCode
	}
	var ones []string
	for i := range 4 {
		sid, status, body := open("key-one")
		if status != http.StatusOK || sid == "" {
			t.Fatalf("session %d of one key: %d %s", i, status, body)
		}
		ones = append(ones, sid)
	}
	if _, status, body := open("key-one"); status != http.StatusServiceUnavailable || !strings.Contains(body, "max_mcp_sessions") {
		t.Fatalf("a fifth session of one key: %d %s", status, body)
	}
	// The oldest used last: the second key takes the second and the third.
	if ping(ones[0], "key-one") != http.StatusOK {
		t.Fatal("ping")
	}
	for i := range 2 {
		if sid, status, body := open("key-two"); status != http.StatusOK || sid == "" {
			t.Fatalf("session %d of the second key: %d %s", i, status, body)
		}
	}
	if _, status, body := open("key-two"); status != http.StatusServiceUnavailable || !strings.Contains(body, "max_mcp_sessions") {
		t.Fatalf("the second key past its share: %d %s", status, body)
	}
	testkit.Eventually(t, "the evicted sessions to be gone", func() bool {
		return ping(ones[1], "key-one") == http.StatusNotFound && ping(ones[2], "key-one") == http.StatusNotFound
	})
	for _, sid := range []string{ones[0], ones[3]} {
		if code := ping(sid, "key-one"); code != http.StatusOK {
			t.Errorf("a session not evicted answers %d", code)
		}
	}
	_, metrics := ts.do(request{method: http.MethodGet, path: "/metrics", key: "key-one"})
	for _, want := range []string{
		`codemode_pool_held{key="` + keyName("key-one") + `",pool="mcp_sessions"} 2`,
		`codemode_pool_held{key="` + keyName("key-two") + `",pool="mcp_sessions"} 2`,
		`codemode_pool_share{pool="mcp_sessions"} 2`,
		`codemode_pool_evictions_total{pool="mcp_sessions"} 2`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
