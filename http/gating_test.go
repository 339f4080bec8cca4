package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/sessiontest"
)

// Output gating at the edge: a run's or a step's reply is built while its
// log is flushed and sent only once the log is durable; a flush that fails
// turns it into an error, and the result never leaves.
func TestRepliesWaitForTheirLog(t *testing.T) {
	store := sessiontest.NewHeldStore(session.NewMemory())
	ts := newTestServer(t, "", func(su *serverSetup) { su.store = store })
	sid := ts.newSession("default", "")
	for _, tc := range []struct {
		name, path string
		body       string
	}{
		{"run", "/v1/run", `{"code": "return (await tools.math_add({a: 40, b: 2})).sum"}`},
		{"step", "/v1/sessions/" + sid + "/steps", `{"tool_calls": [{"id": "c1", "name": "math_add", "arguments": "{\"a\":40,\"b\":2}"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store.Hold(false)
			reply := ts.sendAsync(request{method: http.MethodPost, path: tc.path, body: tc.body})
			select {
			case r := <-reply:
				t.Fatalf("replied (%v %s) before the log was durable", r.err, r.body)
			case <-time.After(100 * time.Millisecond):
			}
			store.Unhold()
			store.Release()
			r := <-reply
			if r.err != nil || r.resp.StatusCode != http.StatusOK || !strings.Contains(string(r.body), "42") {
				t.Fatalf("reply: %v %+v %s", r.err, r.resp, r.body)
			}
			if r.resp.ContentLength != int64(len(r.body)) {
				t.Errorf("Content-Length %d for a body of %d bytes", r.resp.ContentLength, len(r.body))
			}
		})
		t.Run(tc.name+" whose flush fails", func(t *testing.T) {
			store.Hold(true)
			reply := ts.sendAsync(request{method: http.MethodPost, path: tc.path, body: strings.ReplaceAll(tc.body, `"c1"`, `"c2"`)})
			defer store.Unhold()
			var r response
			for done := false; !done; {
				select {
				case r = <-reply:
					done = true
				case <-time.After(10 * time.Millisecond):
					store.Release() // what was held so far fails
				}
			}
			if r.err != nil || r.resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(r.body), `"code":"STORE_UNAVAILABLE"`) ||
				strings.Contains(string(r.body), `"results"`) || strings.Contains(string(r.body), `"value"`) {
				t.Fatalf("reply: %v %+v %s; want a 503 STORE_UNAVAILABLE without the result", r.err, r.resp, r.body)
			}
		})
	}
}
