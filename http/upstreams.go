package httpapi

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemode/codemode/httpsource"
	"github.com/codemode/codemode/mcp"
)

// Upstreams reports the upstream MCP servers; *mcp.Upstreams implements it.
type Upstreams interface {
	States() []mcp.UpstreamState
}

// upstreams serves GET /v1/upstreams: {"upstreams":[...]}, each upstream MCP
// server with its state (connecting, ready, unresponsive, restarting,
// failed, unauthorized, stopped), last error, tool count, restarts, calls
// waiting, when it was last heard from, renamed and rejected tools, the
// catalog bounds reached, in configuration order. A key sees only the upstreams of
// scopes it may use.
func upstreams(src Upstreams) http.HandlerFunc {
	return statesHandler("upstreams", src, func(st mcp.UpstreamState) string { return st.Scope })
}

// statesHandler serves {"<key>":[...]}: the states src reports of the
// scopes the request's key may use, in order; [] rather than null when there
// are none or src is nil.
func statesHandler[S any](key string, src interface{ States() []S }, scope func(S) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out := []S{}
		if src != nil {
			for _, st := range src.States() {
				if ScopeAllowed(r.Context(), scope(st)) {
					out = append(out, st)
				}
			}
		}
		writeJSON(w, http.StatusOK, map[string][]S{key: out})
	}
}

// upstreamCollector exports each upstream's liveness and restarts, read
// from States at each scrape. The label is the configured name.
type upstreamCollector struct{ src Upstreams }

// upstreamMetrics are an upstream's metrics, labelled with its name.
var upstreamMetrics = stateMetrics[mcp.UpstreamState]{
	{prometheus.NewDesc("codemode_upstream_unresponsive",
		"1 while the upstream MCP server is unresponsive: calls wait on it and nothing, not even a ping's answer, has arrived for liveness.idle + liveness.ping_timeout.",
		[]string{"upstream"}, nil),
		prometheus.GaugeValue, func(st mcp.UpstreamState) float64 { return oneIf(st.State == mcp.StateUnresponsive) }},
	{prometheus.NewDesc("codemode_upstream_unresponsive_total",
		"Times the upstream MCP server was found unresponsive.", []string{"upstream"}, nil),
		prometheus.CounterValue, func(st mcp.UpstreamState) float64 { return float64(st.Unresponsive) }},
	{prometheus.NewDesc("codemode_upstream_restarts_total",
		"Connections to the upstream MCP server that ended and were re-established (among them those restarted because it was not answering for liveness.fail_after).",
		[]string{"upstream"}, nil),
		prometheus.CounterValue, func(st mcp.UpstreamState) float64 { return float64(st.Restarts) }},
	{prometheus.NewDesc("codemode_upstream_stalled_calls_total",
		"Calls to the upstream MCP server that had no reply and no progress for liveness.stall_after (each logged once).", []string{"upstream"}, nil),
		prometheus.CounterValue, func(st mcp.UpstreamState) float64 { return float64(st.StalledCalls) }},
	{prometheus.NewDesc("codemode_upstream_calls_in_flight",
		"Calls waiting on the upstream MCP server.", []string{"upstream"}, nil),
		prometheus.GaugeValue, func(st mcp.UpstreamState) float64 { return float64(st.Calls) }},
	{prometheus.NewDesc("codemode_upstream_progress_dropped_total",
		"Progress notifications of the upstream MCP server not forwarded: a call's progress is coalesced (its last always kept).", []string{"upstream"}, nil),
		prometheus.CounterValue, func(st mcp.UpstreamState) float64 { return float64(st.ProgressDropped) }},
	{prometheus.NewDesc("codemode_upstream_log_messages_dropped_total",
		"Log messages of the upstream MCP server over its rate limit, neither logged nor forwarded.", []string{"upstream"}, nil),
		prometheus.CounterValue, func(st mcp.UpstreamState) float64 { return float64(st.LogsDropped) }},
}

func (c upstreamCollector) Describe(ch chan<- *prometheus.Desc) { upstreamMetrics.describe(ch) }

func (c upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.src.States() {
		upstreamMetrics.collect(ch, st, st.Name)
	}
}

// oneIf is a gauge's value of a condition: 1 while it holds, else 0.
func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// OpenAPISources reports the HTTP APIs configured as tool sources;
// *httpsource.Sources implements it.
type OpenAPISources interface {
	States() []httpsource.State
}

// openAPISources serves GET /v1/openapi_sources: {"openapi_sources":[...]},
// each source with its state (ready, failed, stopped), base URL,
// operations registered, excluded and over the limit, the operations left
// out with their JSON pointer and reason, and its request counters, in
// configuration order. A key sees only the sources of scopes it may use.
func openAPISources(src OpenAPISources) http.HandlerFunc {
	return statesHandler("openapi_sources", src, func(st httpsource.State) string { return st.Scope })
}

// sourceCollector exports each OpenAPI source's requests, failed calls and
// requests in flight.
type sourceCollector struct{ src OpenAPISources }

// sourceMetrics are an OpenAPI source's metrics, labelled with its name.
var sourceMetrics = stateMetrics[httpsource.State]{
	{prometheus.NewDesc("codemode_openapi_requests_total",
		"HTTP requests sent to the OpenAPI source's API, retries included.", []string{"source"}, nil),
		prometheus.CounterValue, func(st httpsource.State) float64 { return float64(st.Requests) }},
	{prometheus.NewDesc("codemode_openapi_failed_calls_total",
		"Calls of the OpenAPI source's operations that failed (an HTTP error status, a timeout, a refused redirect, a response past max_response_bytes).", []string{"source"}, nil),
		prometheus.CounterValue, func(st httpsource.State) float64 { return float64(st.Failures) }},
	{prometheus.NewDesc("codemode_openapi_calls_in_flight",
		"Calls of the OpenAPI source's operations waiting on its API.", []string{"source"}, nil),
		prometheus.GaugeValue, func(st httpsource.State) float64 { return float64(st.Calls) }},
	{prometheus.NewDesc("codemode_openapi_source_ready",
		"1 while the OpenAPI source's operations are registered.", []string{"source"}, nil),
		prometheus.GaugeValue, func(st httpsource.State) float64 { return oneIf(st.State == httpsource.StateReady) }},
}

func (c sourceCollector) Describe(ch chan<- *prometheus.Desc) { sourceMetrics.describe(ch) }

func (c sourceCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.src.States() {
		sourceMetrics.collect(ch, st, st.Name)
	}
}
