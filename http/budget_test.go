package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/codemode/codemode/admission"
	"github.com/codemode/codemode/internal/testkit"
)

// TestMemoryBudget: a run reserves its memory limit of server.memory_budget
// and a request its body while they are served; what does not fit is
// refused at once with 503 OVERLOADED, before it runs or is read; /metrics
// shows the budget and what is reserved, and everything is returned after.
func TestMemoryBudget(t *testing.T) {
	ts := newTestServer(t, "limits: {memory: 64MiB}\nserver: {memory_budget: 100MiB, max_body_bytes: 1MiB}")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	held := ts.sendAsync(request{method: http.MethodPost, path: "/v1/run", ctx: ctx,
		body: `{"code": "await tools.util_sleep({ms: 60000})"}`})
	testkit.Eventually(t, "the first run to start", func() bool { return ts.inflight() == 1 })
	if got := ts.srv.budget.InUse(); got < 64<<20 || got > 64<<20+1<<10 {
		t.Fatalf("a run in flight reserves %d bytes", got)
	}

	resp, body := ts.post("/v1/run", `{"code": "return 1"}`)
	msg := wantError(t, resp, body, http.StatusServiceUnavailable, CodeOverloaded)
	if !strings.Contains(msg, "server.memory_budget, 100 MiB") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("message %q", msg)
	}
	// A step that runs no program needs no run's memory.
	id := ts.newSession("", "")
	resp, body = ts.post("/v1/sessions/"+id+"/steps", `{"tool_calls": [{"id": "a", "name": "math_add", "arguments": "{\"a\":1,\"b\":2}"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a native step: %d %s", resp.StatusCode, body)
	}
	resp, body = ts.post("/v1/sessions/"+id+"/steps", `{"tool_calls": [{"id": "b", "name": "run_code", "arguments": "{\"code\":\"return 1\"}"}]}`)
	wantError(t, resp, body, http.StatusServiceUnavailable, CodeOverloaded)
	// With less than 512 KiB left, a request declaring a 600 KiB body is
	// refused before it is read.
	release, err := ts.srv.budget.Reserve(36<<20 - 512<<10)
	if err != nil {
		t.Fatal(err)
	}
	resp, body = ts.do(request{method: http.MethodPost, path: "/v1/sessions", body: `{"scope": "` + strings.Repeat(" ", 600<<10) + `"}`})
	if msg := wantError(t, resp, body, http.StatusServiceUnavailable, CodeOverloaded); !strings.Contains(msg, "request body") {
		t.Fatalf("message %q", msg)
	}
	release()

	_, metrics := ts.get("/metrics")
	for _, want := range []string{"codemode_memory_budget_bytes 1.048576e+08", "codemode_memory_reserved_bytes 6.7"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if n := strings.Count(ts.logs.Counting("refused: memory budget", 3), "refused: memory budget"); n != 3 {
		t.Errorf("%d refusals logged, want 3", n)
	}
	cancel()
	<-held
	testkit.Eventually(t, "the reservations to be returned", func() bool { return ts.srv.budget.InUse() == 0 })
	ts.runOK(map[string]any{"code": "return 1"})
}

// TestMemoryBudgetConfig: no memory_budget is three quarters of the machine,
// and at least one run with a full body (config.Validate refuses a set
// budget smaller than that).
func TestMemoryBudgetConfig(t *testing.T) {
	a, _ := newTestApp(t, "", nil)
	srv, err := New(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := srv.budget.Limit(), max(admission.DefaultLimit(), 512<<20+1<<20); got != want {
		t.Fatalf("default budget %d, want %d", got, want)
	}
}

// A run or a step returns its slot, its memory and its body's reservation
// before its reply is sent: a client that has the reply and sends its next
// request at once finds them free (the metrics and log lines come after).
func TestRepliesFollowTheirRelease(t *testing.T) {
	ts := newTestServer(t, "server: {max_inflight_runs: 1, max_queued_runs: 0}")
	id := ts.newSession("", "")
	for i := 0; i < 20; i++ {
		if i%2 == 0 {
			ts.runOK(map[string]any{"code": "return 1"})
		} else {
			resp, b := ts.post("/v1/sessions/"+id+"/steps", `{"tool_calls": [{"id": "c`+strconv.Itoa(i)+`", "name": "run_code", "arguments": "{\"code\":\"return 1\"}"}]}`)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("step: %d %s", resp.StatusCode, b)
			}
		}
		if got, running := ts.srv.budget.InUse(), ts.inflight(); got != 0 || running != 0 {
			t.Fatalf("request %d: %d bytes reserved and %v runs in flight once its reply came", i, got, running)
		}
	}
}
