package httpapi

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/httpsource"
	"github.com/codemode/codemode/mcp"
)

// fakeUpstreams reports fixed states.
type fakeUpstreams []mcp.UpstreamState

func (f fakeUpstreams) States() []mcp.UpstreamState { return f }

func TestUpstreams(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	states := fakeUpstreams{
		{Name: "notes", Scope: "default", Transport: "stdio", State: mcp.StateReady, Since: since, Tools: 3, Restarts: 1},
		{Name: "remote", Scope: "readonly", Transport: "streamable-http", State: mcp.StateFailed, Since: since, LastError: "connect: connection refused", Attempts: 4,
			Rejected: []mcp.RejectedTool{{Tool: "long_job", Reason: "requires task-augmented calls"}}},
	}
	type body struct {
		Upstreams []mcp.UpstreamState `json:"upstreams"`
	}
	withUpstreams := func(su *serverSetup) { su.opts.Upstreams = states }
	t.Run("every upstream on an open server", func(t *testing.T) {
		ts := newTestServer(t, scopesYAML, withUpstreams)
		resp, b := ts.get("/v1/upstreams")
		got := decode[body](t, resp, b, http.StatusOK)
		if !reflect.DeepEqual(got.Upstreams, []mcp.UpstreamState(states)) {
			t.Fatalf("upstreams\n got %+v\nwant %+v", got.Upstreams, states)
		}
	})
	t.Run("a key sees the upstreams of its scopes", func(t *testing.T) {
		ts := newTestServer(t, keysYAML, withUpstreams)
		resp, b := ts.do(request{method: http.MethodGet, path: "/v1/upstreams", key: keyB})
		got := decode[body](t, resp, b, http.StatusOK)
		if len(got.Upstreams) != 1 || got.Upstreams[0].Name != "remote" || got.Upstreams[0].LastError == "" {
			t.Fatalf("key B: %+v", got.Upstreams)
		}
		resp, b = ts.get("/v1/upstreams")
		wantError(t, resp, b, http.StatusUnauthorized, CodeUnauthorized)
	})
	t.Run("metrics", func(t *testing.T) {
		states := fakeUpstreams{
			{Name: "notes", State: mcp.StateReady, Restarts: 2, Calls: 3, StalledCalls: 1, ProgressDropped: 7, LogsDropped: 9},
			{Name: "slow", State: mcp.StateUnresponsive, Unresponsive: 4},
		}
		ts := newTestServer(t, scopesYAML, func(su *serverSetup) { su.opts.Upstreams = states })
		_, b := ts.get("/metrics")
		for _, want := range []string{
			`codemode_upstream_unresponsive{upstream="notes"} 0`, `codemode_upstream_unresponsive{upstream="slow"} 1`,
			`codemode_upstream_unresponsive_total{upstream="slow"} 4`, `codemode_upstream_restarts_total{upstream="notes"} 2`,
			`codemode_upstream_stalled_calls_total{upstream="notes"} 1`, `codemode_upstream_calls_in_flight{upstream="notes"} 3`,
			`codemode_upstream_progress_dropped_total{upstream="notes"} 7`, `codemode_upstream_log_messages_dropped_total{upstream="notes"} 9`,
		} {
			if !strings.Contains(string(b), want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	})
	t.Run("none configured is an empty list", func(t *testing.T) {
		ts := newTestServer(t, scopesYAML)
		resp, b := ts.get("/v1/upstreams")
		if got := decode[body](t, resp, b, http.StatusOK); got.Upstreams == nil || len(got.Upstreams) != 0 {
			t.Fatalf("no upstreams: %s", b)
		}
	})
}

// fakeSources reports fixed OpenAPI source states.
type fakeSources []httpsource.State

func (f fakeSources) States() []httpsource.State { return f }

// TestOpenAPISources: GET /v1/openapi_sources lists the sources of the
// scopes a key may use, /readyz checks each, and their metrics are exported.
func TestOpenAPISources(t *testing.T) {
	states := fakeSources{
		{Name: "gh", Scope: "default", State: httpsource.StateReady, Operations: 1223, Requests: 5, Failures: 2, Calls: 1},
		{Name: "orders", Scope: "readonly", State: httpsource.StateFailed, LastError: "fetch the document: 503 Service Unavailable"},
	}
	with := func(su *serverSetup) { su.opts.OpenAPISources = states }
	type body struct {
		Sources []httpsource.State `json:"openapi_sources"`
	}
	ts := newTestServer(t, keysYAML, with)
	resp, b := ts.do(request{method: http.MethodGet, path: "/v1/openapi_sources", key: keyB})
	if got := decode[body](t, resp, b, http.StatusOK); len(got.Sources) != 1 || got.Sources[0].Name != "orders" {
		t.Fatalf("key B: %s", b)
	}
	ts = newTestServer(t, scopesYAML, with)
	resp, b = ts.get("/v1/openapi_sources")
	if got := decode[body](t, resp, b, http.StatusOK); !reflect.DeepEqual(got.Sources, []httpsource.State(states)) {
		t.Fatalf("open server: %s", b)
	}
	resp, b = ts.get("/readyz")
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), `"openapi:gh":{"ok":true`) || !strings.Contains(string(b), `"openapi:orders":{"ok":false,"detail":"failed: fetch the document: 503`) {
		t.Fatalf("readyz: %d %s", resp.StatusCode, b)
	}
	_, b = ts.get("/metrics")
	for _, want := range []string{`codemode_openapi_requests_total{source="gh"} 5`, `codemode_openapi_failed_calls_total{source="gh"} 2`,
		`codemode_openapi_calls_in_flight{source="gh"} 1`, `codemode_openapi_source_ready{source="orders"} 0`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
