package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/codemode/codemode/app"
)

// fuzzBodies are seeds for both request bodies.
var fuzzBodies = []string{
	``,
	`{}`,
	`null`,
	`[]`,
	`"code"`,
	`{"code": "return 1"}`,
	`{"code": "return (await tools.math_add({a: 1, b: 2})).sum", "description": "add", "timeout_ms": 100}`,
	`{"code": "while (true) {}", "timeout_ms": 50}`,
	`{"code": "throw new Error('x')", "scope": "default"}`,
	`{"code": "return 1", "session_id": "nope"}`,
	`{"code": "return 1", "scope": "\u0000"}`,
	`{"code": "return 1", "timeout_ms": -5}`,
	`{"code": "return 1", "timeout_ms": 1e300}`,
	`{"code": "return 1"} trailing`,
	`{"code": "\ud800"}`,
	`{"tool_calls": []}`,
	`{"tool_calls": [{"id": "a", "name": "math_add", "arguments": "{\"a\":1,\"b\":2}"}]}`,
	`{"tool_calls": [{"id": "b", "name": "util_echo", "arguments": {"value": [1, {"x": null}]}}]}`,
	`{"tool_calls": [{"id": "c", "name": "run_code", "arguments": "{\"code\":\"return 1\",\"description\":\"d\"}"}]}`,
	`{"tool_calls": [{"id": "d", "name": "nope", "arguments": "{{{"}]}`,
	`{"tool_calls": [{"id": "", "name": ""}]}`,
	`{"tool_calls": [{"id": "\xff", "name": "math_add"}]}`,
	`{"tool_calls": null}`,
	`{"tool_calls": [null]}`,
	`{"tool_calls": [{"id": "e", "name": "util_sleep", "arguments": "{\"ms\": 60000}"}]}`,
}

const fuzzYAML = "limits: {timeout: 200ms}\nserver: {request_timeout: 2s}\n"

// fuzzBody posts body to path and checks the response: never a 5xx, always
// JSON, and an error response always carries a code and a message.
func fuzzBody(t *testing.T, srv *Server, path, body string) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	srv.ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body)
	}
	if !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("POST %s %q: %d: not JSON: %s", path, body, rec.Code, rec.Body)
	}
	if rec.Code != http.StatusOK && rec.Code != http.StatusCreated {
		var e apiErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
			t.Fatalf("POST %s %q: %d: error body %s", path, body, rec.Code, rec.Body)
		}
	}
}

// fuzzServer seeds f with fuzzBodies and returns a server over a fresh app.
func fuzzServer(f *testing.F) (*app.App, *Server) {
	f.Helper()
	for _, s := range fuzzBodies {
		f.Add(s)
	}
	a, _ := newTestApp(f, fuzzYAML, nil)
	srv, err := New(a, Options{Logger: discardLogger()})
	if err != nil {
		f.Fatal(err)
	}
	return a, srv
}

func FuzzRunBody(f *testing.F) {
	_, srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		fuzzBody(t, srv, "/v1/run", body)
	})
}

func FuzzStepsBody(f *testing.F) {
	a, srv := fuzzServer(f)
	sess, err := a.NewSession(f.Context(), "")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		fuzzBody(t, srv, "/v1/sessions/"+sess.ID+"/steps", body)
	})
}
