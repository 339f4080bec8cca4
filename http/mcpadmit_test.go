package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// blockingMCP stands in for the MCP handler: a tools/call waits until release is closed.
type blockingMCP struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blockingMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.NewDecoder(r.Body).Decode(&m)
	if m.Method == "tools/call" {
		b.entered <- struct{}{}
		<-b.release
	}
	writeJSON(w, http.StatusOK, map[string]string{"reached": m.Method})
}

// An MCP tool call takes a run slot (and run_code the run's memory) like a REST run: with the
// one slot taken, a second call is refused with the same 503, while other MCP messages and the
// body the handler reads pass untouched.
func TestMCPToolCallsAreAdmittedLikeRuns(t *testing.T) {
	probe := &blockingMCP{entered: make(chan struct{}, 1), release: make(chan struct{})}
	ts := newTestServer(t, "server: {max_inflight_runs: 1, max_queued_runs: 0}", func(su *serverSetup) { su.opts.MCP = probe })
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"return 1"}}}`
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		resp, body := ts.do(request{method: http.MethodPost, path: "/mcp", body: call})
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"tools/call"`) {
			t.Errorf("first call: %d %s", resp.StatusCode, body)
		}
	}()
	<-probe.entered
	if got := ts.srv.budget.InUse(); got < int64(ts.app.Config.Limits.Memory) {
		t.Errorf("memory in use during a run_code call = %d, want at least limits.memory %d", got, ts.app.Config.Limits.Memory)
	}
	resp, body := ts.do(request{method: http.MethodPost, path: "/mcp", body: strings.Replace(call, `"id":1`, `"id":2`, 1)})
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), CodeOverloaded) || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second call with the slot taken: %d %s", resp.StatusCode, body)
	}
	batch := `[{"jsonrpc":"2.0","id":3,"method":"tools/list"},{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"util_echo"}}]`
	if resp, _ := ts.do(request{method: http.MethodPost, path: "/mcp", body: batch}); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a batch holding a tools/call with the slot taken: %d", resp.StatusCode)
	}
	for _, other := range []string{`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, `not json`} {
		if resp, body := ts.do(request{method: http.MethodPost, path: "/mcp", body: other}); resp.StatusCode != http.StatusOK {
			t.Errorf("%s with the slot taken: %d %s", other, resp.StatusCode, body)
		}
	}
	close(probe.release)
	wg.Wait()
	if got := ts.srv.budget.InUse(); got != 0 {
		t.Errorf("memory in use after the calls = %d", got)
	}
}

func FuzzMCPToolCalls(f *testing.F) {
	for _, s := range []string{`{"method":"tools/call","params":{"name":"run_code"}}`, `[{"method":"tools/call"},1]`, `[`, ` [ ]`, `null`, `{"params":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		calls, runCode := mcpToolCalls(body)
		if runCode && !calls {
			t.Fatalf("run_code without a call: %q", body)
		}
	})
}
