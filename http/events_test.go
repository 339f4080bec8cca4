package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/testkit"
)

// TestEventStreamLive: a stream opened before a run delivers the run's
// events while it runs (it is held mid-run by an approval), then the rest;
// a stream resumes from Last-Event-ID or ?after.
func TestEventStreamLive(t *testing.T) {
	ts := newTestServer(t, approvalYAML)
	id := ts.newSession("", "")
	stream := ts.openStream("/v1/sessions/"+id+"/events", nil)

	done := make(chan runResult, 1)
	go func() {
		resp, err := ts.send(request{method: http.MethodPost, path: "/v1/run", body: map[string]any{
			"session_id": id,
			"code":       "await tools.util_echo({value: 1}); await tools.files_write({path: 'a.txt', content: 'hi'}); return 'done'",
		}})
		if err != nil {
			t.Error(err)
			close(done)
			return
		}
		defer resp.Body.Close()
		var res runResult
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
			t.Error(err)
		}
		done <- res
	}()

	before := stream.until("approval/asked")
	wantTypes := []string{"tool/call", "tool/code-dispatch-start", "tool/code-dispatch", "tool/code-dispatch-start", "approval/asked"}
	if strings.Join(types(before), ",") != strings.Join(wantTypes, ",") {
		t.Fatalf("events before the approval: %v, want %v", types(before), wantTypes)
	}
	select {
	case <-done:
		t.Fatal("the run finished while its approval was pending")
	default:
	}
	var asked struct {
		ApprovalID string `json:"approval_id"`
	}
	if err := json.Unmarshal(before[len(before)-1].data, &asked); err != nil || asked.ApprovalID == "" {
		t.Fatalf("approval/asked data %s: %v", before[len(before)-1].data, err)
	}
	resp, b := ts.post("/v1/sessions/"+id+"/approvals/"+asked.ApprovalID, `{"decision": "allow"}`)
	decode[map[string]string](t, resp, b, http.StatusOK)

	after := stream.until("tool/result")
	wantTypes = []string{"approval/answered", "tool/code-dispatch", "tool/result"}
	if strings.Join(types(after), ",") != strings.Join(wantTypes, ",") {
		t.Fatalf("events after the approval: %v, want %v", types(after), wantTypes)
	}
	select {
	case res := <-done:
		if string(res.result(t)) != `"done"` {
			t.Errorf("run result %s", res.Value)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not finish")
	}

	// Every streamed event is the JSON form's event, with id = seq.
	all := append(before, after...)
	resp, b = ts.get("/v1/sessions/" + id + "/events")
	logged := decode[struct{ Events []json.RawMessage }](t, resp, b, http.StatusOK).Events
	if len(logged) != len(all) {
		t.Fatalf("%d events logged, %d streamed", len(logged), len(all))
	}
	for i, ev := range all {
		var e eventJSON
		if err := json.Unmarshal(ev.data, &e); err != nil {
			t.Fatal(err)
		}
		if ev.id != strconv.Itoa(i+1) || e.Seq != int64(i+1) || e.Type != ev.event || e.Time == "" {
			t.Errorf("streamed event %d: id %s event %s data %s", i, ev.id, ev.event, ev.data)
		}
		if string(ev.data) != strings.TrimSpace(string(logged[i])) {
			t.Errorf("streamed event %d differs from the JSON form:\n%s\n%s", i, ev.data, logged[i])
		}
	}

	// Resume.
	last := len(all)
	tests := []struct {
		name   string
		query  string
		header map[string]string
		first  int
	}{
		{"from the start", "", nil, 1},
		{"after", "?after=2", nil, 3},
		{"Last-Event-ID", "", map[string]string{"Last-Event-ID": "3"}, 4},
		{"Last-Event-ID wins over after", "?after=1", map[string]string{"Last-Event-ID": "5"}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ts.openStream("/v1/sessions/"+id+"/events"+tt.query, tt.header)
			for want := tt.first; want <= last; want++ {
				ev, ok := s.next()
				if !ok || ev.id != strconv.Itoa(want) {
					t.Fatalf("resumed stream: got id %q (ok %v), want %d", ev.id, ok, want)
				}
			}
			s.close()
		})
	}
}

func TestEventStreamHeartbeatAndErrors(t *testing.T) {
	ts := newTestServer(t, "", func(su *serverSetup) { su.opts.Heartbeat = 20 * time.Millisecond })
	id := ts.newSession("", "")
	s := ts.openStream("/v1/sessions/"+id+"/events", nil)
	if c, ok := s.nextComment(); !ok || !strings.Contains(c, id) {
		t.Fatalf("first comment %q", c)
	}
	for i := 0; i < 2; i++ {
		if c, ok := s.nextComment(); !ok || c != ": heartbeat" {
			t.Fatalf("heartbeat %d: %q %v", i, c, ok)
		}
	}
	if got := ts.streams(); got != 1 {
		t.Errorf("event stream gauge %v, want 1", got)
	}
	s.close()
	testkit.Eventually(t, "the stream gauge to drop", func() bool { return ts.streams() == 0 })

	tests := []struct {
		name   string
		path   string
		header map[string]string
		status int
		code   string
	}{
		{"unknown session", "/v1/sessions/nope/events", nil, 404, CodeUnknownSession},
		{"bad after", "/v1/sessions/" + id + "/events?after=x", nil, 400, CodeInvalidRequest},
		{"negative after", "/v1/sessions/" + id + "/events?after=-1", nil, 400, CodeInvalidRequest},
		{"bad Last-Event-ID", "/v1/sessions/" + id + "/events", map[string]string{"Last-Event-ID": "abc"}, 400, CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"Accept": "text/event-stream"}
			for k, v := range tt.header {
				h[k] = v
			}
			resp, b := ts.do(request{method: http.MethodGet, path: tt.path, header: h})
			wantError(t, resp, b, tt.status, tt.code)
		})
	}
}

func TestEventsJSON(t *testing.T) {
	ts := newTestServer(t, "")
	id := ts.newSession("", "")
	ts.runOK(map[string]any{"code": "await tools.math_add({a: 1, b: 2}); return 1", "session_id": id})
	list := func(query string) []eventJSON {
		t.Helper()
		resp, b := ts.get("/v1/sessions/" + id + "/events" + query)
		return decode[struct{ Events []eventJSON }](t, resp, b, http.StatusOK).Events
	}
	all := list("")
	if len(all) != 4 || all[0].Type != "tool/call" || all[0].Name != "run_code" || all[3].Type != "tool/result" {
		t.Fatalf("events %+v", all)
	}
	for i, e := range all {
		if e.Seq != int64(i+1) || e.Time == "" {
			t.Errorf("event %d: %+v", i, e)
		}
	}
	if got := list("?after=2"); len(got) != 2 || got[0].Seq != 3 {
		t.Errorf("after=2: %+v", got)
	}
	if got := list("?after=1&limit=2"); len(got) != 2 || got[0].Seq != 2 || got[1].Seq != 3 {
		t.Errorf("after=1&limit=2: %+v", got)
	}
	resp, b := ts.get("/v1/sessions/" + id + "/events?after=99")
	if string(b) != "{\"events\":[],\"more\":false}\n" || resp.StatusCode != 200 {
		t.Errorf("after the end: %d %s", resp.StatusCode, b)
	}
	for _, q := range []string{"?after=x", "?after=-1", "?limit=0", "?limit=x"} {
		resp, b := ts.get("/v1/sessions/" + id + "/events" + q)
		wantError(t, resp, b, http.StatusBadRequest, CodeInvalidRequest)
	}
}
