package httpapi

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/sqlite"
)

// TestSQLiteReplicas: two servers over one SQLite file behave as replicas: a
// session created on one is used on the other, and a stream on one receives
// the events of a run on the other.
func TestSQLiteReplicas(t *testing.T) {
	file := filepath.Join(t.TempDir(), "codemode.db")
	open := func() session.Store {
		st, err := sqlite.Open(context.Background(), file)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a := newTestServer(t, approvalYAML, func(su *serverSetup) { su.store = open() })
	b := newTestServer(t, approvalYAML, func(su *serverSetup) { su.store = open() })

	id := a.newSession("", "")
	stream := a.openStream("/v1/sessions/"+id+"/events", nil)

	res := b.runOK(map[string]any{"code": "return (await tools.math_add({a: 20, b: 22})).sum", "session_id": id})
	if string(res.result(t)) != "42" || res.SessionID != id {
		t.Fatalf("run on the other replica: %+v", res)
	}
	got := stream.until("tool/result")
	want := []string{"tool/call", "tool/code-dispatch-start", "tool/code-dispatch", "tool/result"}
	if len(got) != len(want) {
		t.Fatalf("streamed %v, want %v", types(got), want)
	}
	for i := range want {
		if got[i].event != want[i] {
			t.Fatalf("streamed %v, want %v", types(got), want)
		}
	}

	// An approval asked on one replica is answered on the other.
	done := b.sendAsync(request{method: http.MethodPost, path: "/v1/sessions/" + id + "/steps",
		body: `{"tool_calls": [{"id": "w1", "name": "files_write", "arguments": "{\"path\": \"a\", \"content\": \"b\"}"}]}`})
	p := a.waitApproval(id, "")
	resp, body := a.post("/v1/sessions/"+id+"/approvals/"+p.ID, `{"decision": "deny", "reason": "asked elsewhere"}`)
	decode[map[string]string](t, resp, body, http.StatusOK)
	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	step := decode[stepResponseJSON](t, out.resp, out.body, http.StatusOK)
	if r := step.Results[0]; !r.IsError || r.Error == nil || r.Error.Code != "APPROVAL_REJECTED" {
		t.Fatalf("step answered on the other replica: %s", out.body)
	}

	resp, body = a.get("/v1/sessions/" + id + "/messages")
	msgs := decode[struct{ Messages []map[string]any }](t, resp, body, http.StatusOK)
	if len(msgs.Messages) != 4 {
		t.Errorf("messages rebuilt from the shared log: %s", body)
	}
}
