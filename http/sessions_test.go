package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/testkit"
)

func TestCreateAndGetSession(t *testing.T) {
	ts := newTestServer(t, scopesYAML)
	tests := []struct {
		name, body string
		status     int
		scope      string
		code       string
	}{
		{"no body", "", 201, "default", ""},
		{"empty object", "{}", 201, "default", ""},
		{"scope", `{"scope": "readonly"}`, 201, "readonly", ""},
		{"unknown scope", `{"scope": "nope"}`, 404, "", CodeUnknownScope},
		{"unknown field", `{"scope": "default", "name": "x"}`, 400, "", CodeInvalidRequest},
		{"bad JSON", `{"scope":`, 400, "", CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := ts.post("/v1/sessions", tt.body)
			if tt.code != "" {
				wantError(t, resp, b, tt.status, tt.code)
				return
			}
			got := decode[sessionJSON](t, resp, b, http.StatusCreated)
			if got.ID == "" || got.Scope != tt.scope || got.CreatedAt.IsZero() {
				t.Fatalf("created %s", b)
			}
			if loc := resp.Header.Get("Location"); loc != "/v1/sessions/"+got.ID {
				t.Errorf("Location %q", loc)
			}
			resp, b = ts.get("/v1/sessions/" + got.ID)
			if again := decode[sessionJSON](t, resp, b, http.StatusOK); again.ID != got.ID || again.Scope != tt.scope {
				t.Errorf("GET session = %s", b)
			}
		})
	}
	for _, path := range []string{"/v1/sessions/nope", "/v1/sessions/nope/messages", "/v1/sessions/nope/approvals", "/v1/sessions/nope/events"} {
		resp, b := ts.get(path)
		wantError(t, resp, b, http.StatusNotFound, CodeUnknownSession)
	}
	resp, b := ts.post("/v1/sessions/nope/approvals/a1", `{"decision": "allow"}`)
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownSession)
}

const approvalYAML = scopesYAML + `
policies:
  - {scope: default, tool: files_write, decision: ask, reason: "writes need a person"}
`

// approvalsJSON is GET …/approvals.
type approvalsJSON struct {
	Approvals []pendingJSON `json:"approvals"`
}

type pendingJSON struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason"`
}

// waitApproval polls a session's approvals until one is pending.
func (ts *testServer) waitApproval(id, key string) pendingJSON {
	ts.t.Helper()
	var got []pendingJSON
	testkit.Eventually(ts.t, "a pending approval", func() bool {
		resp, b := ts.do(request{method: http.MethodGet, path: "/v1/sessions/" + id + "/approvals", key: key})
		got = decode[approvalsJSON](ts.t, resp, b, http.StatusOK).Approvals
		return len(got) > 0
	})
	if len(got) != 1 {
		ts.t.Fatalf("pending approvals %+v, want one", got)
	}
	return got[0]
}

// TestApprovalsEndToEnd: a step's call that policy routes to a person waits
// until it is answered over the API; allow runs it, deny fails it with the
// person's reason.
func TestApprovalsEndToEnd(t *testing.T) {
	ts := newTestServer(t, approvalYAML)
	tests := []struct {
		decision, reason string
		isError          bool
		code, msgHas     string
	}{
		{"allow", "", false, "", ""},
		{"deny", "not on a Friday", true, "APPROVAL_REJECTED", "not on a Friday"},
	}
	for _, tt := range tests {
		t.Run(tt.decision, func(t *testing.T) {
			id := ts.newSession("", "")
			resp, b := ts.get("/v1/sessions/" + id + "/approvals")
			if string(b) != `{"approvals":[]}`+"\n" || resp.StatusCode != http.StatusOK {
				t.Fatalf("approvals of a fresh session: %d %q", resp.StatusCode, b)
			}
			done := ts.sendAsync(request{method: http.MethodPost, path: "/v1/sessions/" + id + "/steps",
				body: `{"tool_calls": [{"id": "w1", "name": "files_write", "arguments": "{\"path\": \"a.txt\", \"content\": \"hi\"}"}]}`})

			p := ts.waitApproval(id, "")
			if p.Tool != "files_write" || p.Reason != "writes need a person" || !strings.Contains(string(p.Arguments), "a.txt") || p.ID == "" {
				t.Fatalf("pending approval %+v", p)
			}
			select {
			case <-done:
				t.Fatal("the step finished before the approval was answered")
			default:
			}

			resp, b = ts.do(request{method: http.MethodPost, path: "/v1/sessions/" + id + "/approvals/" + p.ID,
				body: map[string]any{"decision": tt.decision, "reason": tt.reason}, header: map[string]string{"X-Request-Id": "answer-" + tt.decision}})
			if ans := decode[map[string]string](t, resp, b, http.StatusOK); ans["id"] != p.ID || ans["decision"] != tt.decision {
				t.Errorf("answer response %s", b)
			}
			var out response
			select {
			case out = <-done:
				if out.err != nil {
					t.Fatal(out.err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the step did not finish after the answer")
			}
			got := decode[stepResponseJSON](t, out.resp, out.body, http.StatusOK)
			r := got.Results[0]
			if r.IsError != tt.isError {
				t.Fatalf("result %s, want is_error %v", out.body, tt.isError)
			}
			if tt.isError && (r.Error == nil || r.Error.Code != tt.code || !strings.Contains(r.Error.Message, tt.msgHas)) {
				t.Errorf("error %+v, want %s with %q", r.Error, tt.code, tt.msgHas)
			}

			// The answer names the request that gave it.
			resp, b = ts.get("/v1/sessions/" + id + "/events")
			answered := false
			for _, ev := range decode[struct{ Events []map[string]any }](t, resp, b, http.StatusOK).Events {
				if ev["type"] == "approval/answered" {
					answered = ev["request_id"] == "answer-"+tt.decision
				}
			}
			if !answered {
				t.Errorf("no approval/answered with the answer's request id: %s", b)
			}

			// Answered: no longer pending; answering again is a 409.
			resp, b = ts.get("/v1/sessions/" + id + "/approvals")
			if pending := decode[approvalsJSON](t, resp, b, http.StatusOK).Approvals; len(pending) != 0 {
				t.Errorf("still pending: %s", b)
			}
			resp, b = ts.post("/v1/sessions/"+id+"/approvals/"+p.ID, `{"decision": "allow"}`)
			if msg := wantError(t, resp, b, http.StatusConflict, CodeApprovalAnswered); !strings.Contains(msg, p.ID) {
				t.Errorf("second answer: %q does not name the approval", msg)
			}
		})
	}
}

func TestAnswerBadRequests(t *testing.T) {
	ts := newTestServer(t, approvalYAML)
	id := ts.newSession("", "")
	tests := []struct {
		name, body string
		status     int
		code       string
	}{
		{"no decision", `{}`, 400, CodeInvalidRequest},
		{"bad decision", `{"decision": "maybe"}`, 400, CodeInvalidRequest},
		{"unknown field", `{"decision": "allow", "until": "never"}`, 400, CodeInvalidRequest},
		{"empty body", ``, 400, CodeInvalidRequest},
		{"unknown approval", `{"decision": "allow"}`, 404, CodeUnknownApproval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := ts.post("/v1/sessions/"+id+"/approvals/nope", tt.body)
			wantError(t, resp, b, tt.status, tt.code)
		})
	}
}
