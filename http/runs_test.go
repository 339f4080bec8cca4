package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/codemode/codemode/internal/testkit"
)

func TestRun(t *testing.T) {
	ts := newTestServer(t, scopesYAML)

	res := ts.runOK(map[string]any{
		"code":        "const a = await tools.math_add({a: 2, b: 3}); console.log('sum', a.sum); return {sum: a.sum}",
		"description": "add two numbers",
	})
	if got := string(res.result(t)); got != `{"sum":5}` {
		t.Errorf("result %s", got)
	}
	if res.SessionID == "" || res.CallID == "" {
		t.Errorf("no session or call id: %+v", res)
	}
	if len(res.Calls) != 1 || res.Calls[0].Name != "math_add" || res.Calls[0].SubCallID != res.CallID+":code:1" {
		t.Errorf("calls %+v", res.Calls)
	}
	if res.Contexts == nil || res.Error != nil {
		t.Errorf("contexts %v error %v: want [] and null", res.Contexts, res.Error)
	}
	line := logLine(t, ts.logs, "msg=run ")
	for _, want := range []string{"session=" + res.SessionID, "call_id=" + res.CallID, "sub_calls=1", "outcome=ok", "duration="} {
		if !strings.Contains(line, want) {
			t.Errorf("run log line %q lacks %s", line, want)
		}
	}

	// A second run continues the session; TypeScript is accepted.
	res2 := ts.runOK(map[string]any{"code": "const v: number = 7; return v", "session_id": res.SessionID})
	if res2.SessionID != res.SessionID || string(res2.result(t)) != "7" {
		t.Errorf("second run %+v", res2)
	}

	// Runs work in every scope, whatever its mode.
	res3 := ts.runOK(map[string]any{"code": "return (await tools.util_echo({value: 'x'})).value", "scope": "agent"})
	if string(res3.result(t)) != `"x"` {
		t.Errorf("run in a code-mode scope: %s", res3.Value)
	}
}

func TestRunFailuresAreResults(t *testing.T) {
	ts := newTestServer(t, scopesYAML)
	tests := []struct {
		name, code string
		timeoutMS  int
		kind       string
	}{
		{"runtime", "console.log('before'); throw new Error('boom')", 0, "runtime"},
		{"syntax", "return (", 0, "syntax"},
		{"timeout", "await tools.util_sleep({ms: 60000})", 50, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"code": tt.code}
			if tt.timeoutMS > 0 {
				body["timeout_ms"] = tt.timeoutMS
			}
			resp, b := ts.post("/v1/run", body)
			res := decode[runResult](t, resp, b, http.StatusOK)
			if !res.IsError || res.Error == nil || res.Error.Code != "CODE_RUN_FAILED" || res.Error.Kind != tt.kind {
				t.Fatalf("result %s, want CODE_RUN_FAILED kind %s", b, tt.kind)
			}
			if string(res.Value) != "null" {
				t.Errorf("value %s, want null", res.Value)
			}
		})
	}
	// The captured logs stay in the content.
	resp, b := ts.post("/v1/run", map[string]any{"code": "console.log('before'); throw new Error('boom')"})
	if !strings.Contains(string(b), "before") || !strings.Contains(string(b), "boom") {
		t.Errorf("failed run %d %s lacks its logs or message", resp.StatusCode, b)
	}
	if line := logLine(t, ts.logs, "outcome=error"); !strings.Contains(line, "code=CODE_RUN_FAILED") {
		t.Errorf("failed run's log line %q lacks its code", line)
	}
	// A failing tool caught by the program is a successful run.
	res := ts.runOK(map[string]any{"code": "try { await tools.util_fail({message: 'no'}) } catch (e) { return [e.name, e.toolName, e.message] }"})
	if string(res.result(t)) != `["ToolCallError","util_fail","no"]` {
		t.Errorf("caught tool failure: %s", res.result(t))
	}
}

func TestRunBadRequests(t *testing.T) {
	ts := newTestServer(t, scopesYAML)
	readonly := ts.newSession("readonly", "")
	tests := []struct {
		name   string
		body   any
		status int
		code   string
		msg    string
	}{
		{"empty body", "", 400, CodeInvalidRequest, "empty"},
		{"not JSON", "code=1", 400, CodeInvalidRequest, "JSON"},
		{"array", `[{"code":"return 1"}]`, 400, CodeInvalidRequest, "object"},
		{"truncated", `{"code": "return 1"`, 400, CodeInvalidRequest, "JSON"},
		{"trailing data", `{"code": "return 1"} {}`, 400, CodeInvalidRequest, "after"},
		{"unknown field", `{"code": "return 1", "langauge": "js"}`, 400, CodeInvalidRequest, "langauge"},
		{"wrong type", `{"code": 1}`, 400, CodeInvalidRequest, "code"},
		{"missing code", `{"description": "nothing"}`, 400, CodeInvalidRequest, "code"},
		{"empty code", `{"code": ""}`, 400, CodeInvalidRequest, "code"},
		{"negative timeout", `{"code": "return 1", "timeout_ms": -1}`, 400, CodeInvalidRequest, "timeout_ms"},
		{"fractional timeout", `{"code": "return 1", "timeout_ms": 1.5}`, 400, CodeInvalidRequest, "timeout_ms"},
		{"unknown scope", `{"code": "return 1", "scope": "nope"}`, 404, CodeUnknownScope, "nope"},
		{"unknown session", `{"code": "return 1", "session_id": "nope"}`, 404, CodeUnknownSession, "nope"},
		{"session in another scope", `{"code": "return 1", "session_id": "` + readonly + `", "scope": "default"}`, 400, CodeInvalidRequest, "readonly"},
		{"session and unknown scope", `{"code": "return 1", "session_id": "` + readonly + `", "scope": "nope"}`, 404, CodeUnknownScope, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := ts.post("/v1/run", tt.body)
			if msg := wantError(t, resp, b, tt.status, tt.code); !strings.Contains(msg, tt.msg) {
				t.Errorf("message %q lacks %q", msg, tt.msg)
			}
		})
	}
	// The session's own scope may be named.
	ts.runOK(map[string]any{"code": "return 1", "session_id": readonly, "scope": "readonly"})
}

func TestRunTimeoutIsCappedAtTheLimit(t *testing.T) {
	ts := newTestServer(t, "limits: {timeout: 100ms}")
	resp, b := ts.post("/v1/run", map[string]any{"code": "await tools.util_sleep({ms: 60000})", "timeout_ms": 3600000})
	res := decode[runResult](t, resp, b, http.StatusOK)
	if !res.IsError {
		t.Fatalf("a run asking for an hour outlived limits.timeout: %s", b)
	}
}

func TestSteps(t *testing.T) {
	ts := newTestServer(t, scopesYAML)
	id := ts.newSession("", "")
	path := "/v1/sessions/" + id + "/steps"

	resp, b := ts.post(path, map[string]any{"tool_calls": []map[string]any{
		{"id": "c1", "name": "math_add", "arguments": `{"a": 1, "b": 2}`},
		{"id": "c2", "name": "util_fail", "arguments": map[string]any{"message": "nope"}},
		{"id": "c3", "name": "no_such_tool", "arguments": "{}"},
		{"id": "c4", "name": "math_add", "arguments": "{not json"},
		{"id": "c5", "name": "run_code", "arguments": `{"code": "return (await tools.math_add({a: 1, b: 1})).sum", "description": "add"}`},
	}})
	got := decode[stepResponseJSON](t, resp, b, http.StatusOK)
	want := []struct {
		id   string
		code string
	}{{"c1", ""}, {"c2", "TOOL_FAILED"}, {"c3", "UNKNOWN_TOOL"}, {"c4", "INVALID_ARGS"}, {"c5", ""}}
	if len(got.Results) != len(want) {
		t.Fatalf("results %s", b)
	}
	for i, w := range want {
		r := got.Results[i]
		code := ""
		if r.Error != nil {
			code = r.Error.Code
		}
		if r.ToolCallID != w.id || r.IsError != (w.code != "") || code != w.code || len(r.Content) == 0 {
			t.Errorf("result %d = %+v, want id %s code %q", i, r, w.id, w.code)
		}
	}
	if got.Contexts == nil {
		t.Error("contexts is null, want []")
	}
	if line := logLine(t, ts.logs, "msg=step "); !strings.Contains(line, "outcome=error") || !strings.Contains(line, "TOOL_FAILED") {
		t.Errorf("step log line %q", line)
	}

	// The calls are in the log and rebuild into messages.
	resp, b = ts.get("/v1/sessions/" + id + "/messages")
	msgs := decode[struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID, Name, Arguments string
			} `json:"tool_calls"`
		} `json:"messages"`
	}](t, resp, b, http.StatusOK)
	if len(msgs.Messages) != 6 || msgs.Messages[0].Role != "assistant" || len(msgs.Messages[0].ToolCalls) != 5 {
		t.Fatalf("messages %s", b)
	}
	if args := msgs.Messages[0].ToolCalls[1].Arguments; args != `{"message":"nope"}` {
		t.Errorf("object arguments logged as %q", args)
	}
	if args := msgs.Messages[0].ToolCalls[0].Arguments; args != `{"a": 1, "b": 2}` {
		t.Errorf("string arguments not logged verbatim: %q", args)
	}

	// An empty step is fine: it only commits pending contexts.
	resp, b = ts.post(path, `{"tool_calls": []}`)
	if got := decode[stepResponseJSON](t, resp, b, http.StatusOK); len(got.Results) != 0 || got.Results == nil {
		t.Errorf("empty step: %s", b)
	}
}

func TestStepsBadRequests(t *testing.T) {
	ts := newTestServer(t, "")
	id := ts.newSession("", "")
	ts.post("/v1/sessions/"+id+"/steps", `{"tool_calls": [{"id": "used", "name": "math_add", "arguments": "{\"a\":1,\"b\":1}"}]}`)
	tests := []struct {
		name, session, body string
		status              int
		code, msg           string
	}{
		{"unknown session", "nope", `{"tool_calls": []}`, 404, CodeUnknownSession, "nope"},
		{"empty body", id, ``, 400, CodeInvalidRequest, "empty"},
		{"missing tool_calls", id, `{}`, 400, CodeInvalidRequest, "tool_calls"},
		{"null tool_calls", id, `{"tool_calls": null}`, 400, CodeInvalidRequest, "tool_calls"},
		{"unknown field", id, `{"tool_calls": [], "model": "x"}`, 400, CodeInvalidRequest, "model"},
		{"unknown call field", id, `{"tool_calls": [{"id": "a", "name": "math_add", "args": "{}"}]}`, 400, CodeInvalidRequest, "args"},
		{"no id", id, `{"tool_calls": [{"name": "math_add"}]}`, 400, CodeInvalidRequest, "tool_calls[0].id"},
		{"no name", id, `{"tool_calls": [{"id": "a"}]}`, 400, CodeInvalidRequest, "tool_calls[0].name"},
		{"duplicate id", id, `{"tool_calls": [{"id": "a", "name": "math_add"}, {"id": "a", "name": "math_add"}]}`, 400, CodeInvalidRequest, "duplicate"},
		{"id already used", id, `{"tool_calls": [{"id": "used", "name": "math_add"}]}`, 400, CodeInvalidRequest, "used"},
		{"numeric arguments", id, `{"tool_calls": [{"id": "a", "name": "math_add", "arguments": 5}]}`, 400, CodeInvalidRequest, "arguments"},
		{"calls not a list", id, `{"tool_calls": {"id": "a"}}`, 400, CodeInvalidRequest, "tool_calls"},
		{"id too long", id, `{"tool_calls": [{"id": "` + strings.Repeat("x", 257) + `", "name": "math_add"}]}`, 400, CodeInvalidRequest, "at most 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := ts.post("/v1/sessions/"+tt.session+"/steps", tt.body)
			if msg := wantError(t, resp, b, tt.status, tt.code); !strings.Contains(msg, tt.msg) {
				t.Errorf("message %q lacks %q", msg, tt.msg)
			}
		})
	}
}

// logLine returns the first log line containing substr.
func logLine(t *testing.T, buf *testkit.Logs, substr string) string {
	t.Helper()
	logs := buf.Containing(substr)
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, substr) {
			return l
		}
	}
	t.Fatalf("no log line with %q in:\n%s", substr, logs)
	return ""
}
