package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestStepSuspends: a step's run_code call whose program waits on an ask
// past approvals.hold suspends: the reply lists it as suspended with the ask,
// the session takes no step meanwhile (409 RUN_SUSPENDED), and once the ask
// is answered the run resumes and its result is read from the call endpoint.
func TestStepSuspends(t *testing.T) {
	ts := newTestServer(t, approvalYAML+"approvals: {hold: 50ms}\n")
	sid := ts.newSession("", "")
	code, _ := json.Marshal(map[string]string{"code": `await tools.files_write({ path: "a.txt", content: "x" }); return (await tools.files_read({ path: "a.txt" })).content`})
	resp, body := ts.post("/v1/sessions/"+sid+"/steps", map[string]any{"tool_calls": []map[string]any{{"id": "c1", "name": "run_code", "arguments": string(code)}}})
	step := decode[struct {
		Results []struct {
			ToolCallID string `json:"tool_call_id"`
			IsError    bool   `json:"is_error"`
			Error      struct {
				Code string `json:"code"`
			} `json:"error"`
		} `json:"results"`
		Suspended        []string      `json:"suspended"`
		PendingApprovals []pendingJSON `json:"pending_approvals"`
	}](t, resp, body, http.StatusOK)
	if len(step.Results) != 1 || step.Results[0].Error.Code != "SUSPENDED" || len(step.Suspended) != 1 || step.Suspended[0] != "c1" ||
		len(step.PendingApprovals) != 1 || step.PendingApprovals[0].Tool != "files_write" {
		t.Fatalf("step reply: %s", body)
	}
	resp, body = ts.post("/v1/sessions/"+sid+"/steps", map[string]any{"tool_calls": []map[string]any{{"id": "c2", "name": "math_add", "arguments": `{"a":1,"b":2}`}}})
	wantError(t, resp, body, http.StatusConflict, "RUN_SUSPENDED")

	resp, body = ts.post(fmt.Sprintf("/v1/sessions/%s/approvals/%s", sid, step.PendingApprovals[0].ID), map[string]any{"decision": "allow"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("answer: %d %s", resp.StatusCode, body)
	}
	resp, body = ts.get("/v1/sessions/" + sid + "/calls/c1?wait=20s")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"state":"settled"`) || !strings.Contains(string(body), `"text":"x"`) {
		t.Fatalf("the resumed call: %d %s", resp.StatusCode, body)
	}
	// Answering again: the ask was answered.
	resp, body = ts.post(fmt.Sprintf("/v1/sessions/%s/approvals/%s", sid, step.PendingApprovals[0].ID), map[string]any{"decision": "allow"})
	wantError(t, resp, body, http.StatusConflict, "APPROVAL_ANSWERED")
	// The session goes on.
	resp, body = ts.post("/v1/sessions/"+sid+"/steps", map[string]any{"tool_calls": []map[string]any{{"id": "c3", "name": "math_add", "arguments": `{"a":1,"b":2}`}}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a step after the run resumed: %d %s", resp.StatusCode, body)
	}
}
