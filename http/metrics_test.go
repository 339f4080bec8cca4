package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/codemode/codemode/internal/version"
	"github.com/codemode/codemode/session/sqlite"
)

func TestMetrics(t *testing.T) {
	ts := newTestServer(t, "")
	ts.runOK(map[string]any{"code": "await tools.math_add({a: 1, b: 2}); await tools.util_echo({value: 1}); return 1"})
	ts.post("/v1/run", `{"code": "await tools.util_fail({message: 'x'})"}`)
	ts.post("/v1/run", `{"code": "return (("}`)
	ts.post("/v1/run", `{"code": 5}`)
	id := ts.newSession("", "")
	ts.post("/v1/sessions/"+id+"/steps", `{"tool_calls": [{"id": "c1", "name": "math_add", "arguments": "{\"a\":1,\"b\":1}"}]}`)

	ts.settled()
	resp, body := ts.get("/metrics")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("metrics: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	text := string(body)
	for _, want := range []string{
		`codemode_runs_total{entry="run",outcome="ok"} 1`,
		`codemode_runs_total{entry="run",outcome="error"} 2`,
		`codemode_runs_total{entry="step",outcome="ok"} 1`,
		`codemode_sub_calls_total 3`,
		`codemode_errors_total{code="TOOL_FAILED",kind=""} 1`,
		`codemode_errors_total{code="CODE_RUN_FAILED",kind="runtime"} 1`,
		`codemode_errors_total{code="CODE_RUN_FAILED",kind="syntax"} 1`,
		`codemode_run_duration_seconds_count{entry="run",kind="",outcome="ok"} 1`,
		`codemode_run_duration_seconds_count{entry="run",kind="runtime",outcome="error"} 1`,
		`codemode_run_duration_seconds_count{entry="run",kind="syntax",outcome="error"} 1`,
		`codemode_run_duration_seconds_count{entry="step",kind="",outcome="ok"} 1`,
		`codemode_tool_call_duration_seconds_count{outcome="ok",tool="math_add"} 1`,
		`codemode_tool_call_duration_seconds_count{outcome="ok",tool="util_echo"} 1`,
		`codemode_tool_call_duration_seconds_count{outcome="error",tool="util_fail"} 1`,
		`codemode_http_request_duration_seconds_count{code="200",method="POST",route="/v1/run"} 3`,
		`codemode_http_request_duration_seconds_count{code="400",method="POST",route="/v1/run"} 1`,
		`codemode_http_request_duration_seconds_count{code="200",method="POST",route="/v1/sessions/{id}/steps"} 1`,
		fmt.Sprintf(`codemode_build_info{goversion=%q,version=%q} 1`, goruntime.Version(), version.String()),
		`codemode_runs_in_flight 0`,
		`codemode_runs_queued 0`,
		`codemode_event_streams 0`,
		`codemode_http_requests_total{method="POST",route="/v1/run",status="200"} 3`,
		`codemode_http_requests_total{method="POST",route="/v1/run",status="400"} 1`,
		`codemode_http_requests_total{method="POST",route="/v1/sessions",status="201"} 1`,
		`codemode_http_errors_total{code="INVALID_REQUEST"} 1`,
		`go_goroutines`,
		`codemode_demo_state_sessions 0`,
		`codemode_demo_state_bytes 0`,
		`codemode_memory_reserved_bytes 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	id = ts.newSession("", "")
	ts.post("/v1/sessions/"+id+"/steps", `{"tool_calls": [{"id": "k", "name": "kv_set", "arguments": "{\"key\":\"k\",\"value\":12}"}]}`)
	ts.settled()
	_, body = ts.get("/metrics")
	for _, want := range []string{"codemode_demo_state_sessions 1", "codemode_demo_state_bytes 3"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	ts.get("/no/such/route")
	ts.settled()
	_, body = ts.get("/metrics")
	if !strings.Contains(string(body), `codemode_http_requests_total{method="GET",route="unmatched",status="404"} 1`) {
		t.Error("an unmatched route is not counted as such")
	}
}

// A store with group commit shows its commits: a trivial run in a new
// session is one write of two events in one commit; the memory store has
// no commits to show.
func TestLogMetrics(t *testing.T) {
	mem := newTestServer(t, "")
	if _, body := mem.get("/metrics"); strings.Contains(string(body), "codemode_log_commits_total") || strings.Contains(string(body), "codemode_log_checkpoints_total") {
		t.Error("the memory store shows group commits or checkpoints")
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "log.db"))
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, "", func(su *serverSetup) { su.store = st })
	ts.runOK(map[string]any{"code": "return 1"})
	ts.settled()
	_, body := ts.get("/metrics")
	text := string(body)
	for _, want := range []string{
		"codemode_log_commits_total 1",
		"codemode_log_commit_failures_total 0",
		"codemode_log_writes_total 1",
		"codemode_log_events_total 2",
		"codemode_log_queued_writes 0",
		"codemode_log_checkpoints_total 0", // a trivial run is far from a checkpoint
		"codemode_log_checkpoint_failures_total 0",
		"codemode_log_checkpoint_pages_left 0",
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, "codemode_log_commit_seconds_total 0\n") || !strings.Contains(text, "codemode_log_commit_seconds_total ") {
		t.Error("codemode_log_commit_seconds_total does not count the commit's time")
	}
}
