package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// callStateJSON is the reply of GET /v1/sessions/{id}/calls/{call_id}.
type callStateJSON struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	State  string `json:"state"`
	Result *struct {
		IsError bool `json:"is_error"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Calls []struct {
		Name string `json:"name"`
	} `json:"calls"`
}

// TestCallState: a call is open while it waits (an ask) and settled once
// answered, with its result and a program's SDK calls; ?wait returns as
// soon as the result is logged; unknown calls and bad waits are refused.
func TestCallState(t *testing.T) {
	ts := newTestServer(t, approvalYAML)
	id := ts.newSession("", "")
	done := ts.sendAsync(request{method: http.MethodPost, path: "/v1/sessions/" + id + "/steps",
		body: `{"tool_calls": [{"id": "w1", "name": "files_write", "arguments": "{\"path\": \"a.txt\", \"content\": \"hi\"}"}]}`})
	p := ts.waitApproval(id, "")

	resp, b := ts.get("/v1/sessions/" + id + "/calls/w1?wait=50ms")
	if st := decode[callStateJSON](t, resp, b, http.StatusOK); st.State != "open" || st.Tool != "files_write" || st.Result != nil {
		t.Fatalf("while it waits: %s", b)
	}
	waited := ts.sendAsync(request{method: http.MethodGet, path: "/v1/sessions/" + id + "/calls/w1?wait=1m"})
	time.Sleep(50 * time.Millisecond)
	if resp, b := ts.post("/v1/sessions/"+id+"/approvals/"+p.ID, `{"decision": "allow"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("answer: %d %s", resp.StatusCode, b)
	}
	select {
	case out := <-waited:
		if out.err != nil {
			t.Fatal(out.err)
		}
		if st := decode[callStateJSON](t, out.resp, out.body, http.StatusOK); st.State != "settled" || st.Result == nil || st.Result.IsError {
			t.Fatalf("after the answer: %s", out.body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("?wait did not return when the result was logged")
	}
	<-done

	resp, b = ts.post("/v1/run", map[string]any{"code": `await tools.math_add({a: 1, b: 2}); return (await tools.math_add({a: 2, b: 2})).sum`})
	run := decode[struct {
		SessionID string `json:"session_id"`
		CallID    string `json:"call_id"`
	}](t, resp, b, http.StatusOK)
	resp, b = ts.get("/v1/sessions/" + run.SessionID + "/calls/" + run.CallID)
	st := decode[callStateJSON](t, resp, b, http.StatusOK)
	if st.State != "settled" || st.Tool != "run_code" || len(st.Calls) != 2 || st.Calls[1].Name != "math_add" ||
		st.Result == nil || len(st.Result.Content) == 0 || !strings.Contains(st.Result.Content[0].Text, "4") {
		t.Fatalf("a run: %s", b)
	}

	resp, b = ts.get("/v1/sessions/" + id + "/calls/nope")
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownCall)
	resp, b = ts.get("/v1/sessions/" + id + "/calls/w1?wait=1h")
	wantError(t, resp, b, http.StatusBadRequest, CodeInvalidRequest)
	resp, b = ts.get("/v1/sessions/nope/calls/w1")
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownSession)
}
