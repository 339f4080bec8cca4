package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// Identifiers a client sends refuse control characters and invalid UTF-8
// with a 400 naming the field, before anything reaches the log.
func TestIdentifiersRefuseControlCharacters(t *testing.T) {
	ts := newTestServer(t, "")
	id := ts.newSession("", "")
	step := func(callID, name string) string {
		return `{"tool_calls": [{"id": "ok", "name": "math_add", "arguments": "{}"}, {"id": "` + callID + `", "name": "` + name + `", "arguments": "{\"a\":1,\"b\":2}"}]}`
	}
	cases := []struct {
		name, method, path, body, field string
	}{
		{"call id with a NUL", http.MethodPost, "/v1/sessions/" + id + "/steps", step(`a\u0000b`, "math_add"), "tool_calls[1].id has a control character (U+0000"},
		{"call id with a newline", http.MethodPost, "/v1/sessions/" + id + "/steps", step(`a\nb`, "math_add"), "tool_calls[1].id has a control character (U+000A"},
		{"call id with DEL", http.MethodPost, "/v1/sessions/" + id + "/steps", step("a\x7fb", "math_add"), "tool_calls[1].id has a control character"},
		{"call id with C1", http.MethodPost, "/v1/sessions/" + id + "/steps", step(`a\u0085b`, "math_add"), "tool_calls[1].id has a control character"},
		{"tool name with a NUL", http.MethodPost, "/v1/sessions/" + id + "/steps", step("c", `math\u0000add`), "tool_calls[1].name has a control character"},
		{"run's session_id", http.MethodPost, "/v1/run", `{"code": "return 1", "session_id": "s\u0000"}`, "session_id has a control character"},
		{"session id in the path", http.MethodGet, "/v1/sessions/a%00b", "", "the session id has a control character"},
		{"session id in a step's path", http.MethodPost, "/v1/sessions/a%0Ab/steps", step("c", "math_add"), "the session id has a control character"},
		{"approval id", http.MethodPost, "/v1/sessions/" + id + "/approvals/a%01b", `{"decision": "allow"}`, "the approval id has a control character"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.body != "" {
				body = c.body
			}
			resp, b := ts.do(request{method: c.method, path: c.path, body: body})
			msg := wantError(t, resp, b, http.StatusBadRequest, CodeInvalidRequest)
			if !strings.Contains(msg, c.field) {
				t.Fatalf("message %q does not name %q", msg, c.field)
			}
		})
	}
	// A JSON body cannot carry invalid UTF-8 (the decoder replaces it); a
	// path can.
	resp, b := ts.get("/v1/sessions/a%FFb")
	if msg := wantError(t, resp, b, http.StatusBadRequest, CodeInvalidRequest); !strings.Contains(msg, "the session id is not valid UTF-8") {
		t.Fatalf("message %q", msg)
	}
	// Nothing of the refused steps reached the log.
	resp, b = ts.get("/v1/sessions/" + id + "/events")
	if resp.StatusCode != http.StatusOK || strings.Contains(string(b), "tool/call") {
		t.Fatalf("events after refused steps: %d %s", resp.StatusCode, b)
	}
}
