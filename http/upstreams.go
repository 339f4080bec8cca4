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
	return func(w http.ResponseWriter, r *http.Request) {
		var all []mcp.UpstreamState
		if src != nil {
			all = src.States()
		}
		writeJSON(w, http.StatusOK, struct {
			Upstreams []mcp.UpstreamState `json:"upstreams"`
		}{allowedStates(r, all, func(st mcp.UpstreamState) string { return st.Scope })})
	}
}

// allowedStates is the states of the scopes the request's key may use, in
// order; never nil, so that the list is [] rather than null.
func allowedStates[S any](r *http.Request, states []S, scope func(S) string) []S {
	out := []S{}
	for _, st := range states {
		if ScopeAllowed(r.Context(), scope(st)) {
			out = append(out, st)
		}
	}
	return out
}

// upstreamCollector exports each upstream's liveness and restarts, read
// from States at each scrape. The label is the configured name.
type upstreamCollector struct{ src Upstreams }

var (
	upstreamUnresponsiveDesc = prometheus.NewDesc("codemode_upstream_unresponsive",
		"1 while the upstream MCP server is unresponsive: calls wait on it and nothing, not even a ping's answer, has arrived for liveness.idle + liveness.ping_timeout.",
		[]string{"upstream"}, nil)
	upstreamUnresponsiveTotalDesc = prometheus.NewDesc("codemode_upstream_unresponsive_total",
		"Times the upstream MCP server was found unresponsive.", []string{"upstream"}, nil)
	upstreamRestartsDesc = prometheus.NewDesc("codemode_upstream_restarts_total",
		"Connections to the upstream MCP server that ended and were re-established (among them those restarted because it was not answering for liveness.fail_after).",
		[]string{"upstream"}, nil)
	upstreamStalledDesc = prometheus.NewDesc("codemode_upstream_stalled_calls_total",
		"Calls to the upstream MCP server that had no reply and no progress for liveness.stall_after (each logged once).", []string{"upstream"}, nil)
	upstreamCallsDesc = prometheus.NewDesc("codemode_upstream_calls_in_flight",
		"Calls waiting on the upstream MCP server.", []string{"upstream"}, nil)
	upstreamProgressDroppedDesc = prometheus.NewDesc("codemode_upstream_progress_dropped_total",
		"Progress notifications of the upstream MCP server not forwarded: a call's progress is coalesced (its last always kept).", []string{"upstream"}, nil)
	upstreamLogsDroppedDesc = prometheus.NewDesc("codemode_upstream_log_messages_dropped_total",
		"Log messages of the upstream MCP server over its rate limit, neither logged nor forwarded.", []string{"upstream"}, nil)
)

func (c upstreamCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, upstreamUnresponsiveDesc, upstreamUnresponsiveTotalDesc, upstreamRestartsDesc, upstreamStalledDesc, upstreamCallsDesc, upstreamProgressDroppedDesc, upstreamLogsDroppedDesc)
}

func (c upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.src.States() {
		unresponsive := 0.0
		if st.State == mcp.StateUnresponsive {
			unresponsive = 1
		}
		ch <- prometheus.MustNewConstMetric(upstreamUnresponsiveDesc, prometheus.GaugeValue, unresponsive, st.Name)
		ch <- prometheus.MustNewConstMetric(upstreamUnresponsiveTotalDesc, prometheus.CounterValue, float64(st.Unresponsive), st.Name)
		ch <- prometheus.MustNewConstMetric(upstreamRestartsDesc, prometheus.CounterValue, float64(st.Restarts), st.Name)
		ch <- prometheus.MustNewConstMetric(upstreamStalledDesc, prometheus.CounterValue, float64(st.StalledCalls), st.Name)
		ch <- prometheus.MustNewConstMetric(upstreamCallsDesc, prometheus.GaugeValue, float64(st.Calls), st.Name)
		ch <- prometheus.MustNewConstMetric(upstreamProgressDroppedDesc, prometheus.CounterValue, float64(st.ProgressDropped), st.Name)
		ch <- prometheus.MustNewConstMetric(upstreamLogsDroppedDesc, prometheus.CounterValue, float64(st.LogsDropped), st.Name)
	}
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
	return func(w http.ResponseWriter, r *http.Request) {
		var all []httpsource.State
		if src != nil {
			all = src.States()
		}
		writeJSON(w, http.StatusOK, struct {
			Sources []httpsource.State `json:"openapi_sources"`
		}{allowedStates(r, all, func(st httpsource.State) string { return st.Scope })})
	}
}

// sourceCollector exports each OpenAPI source's requests, failed calls and
// requests in flight.
type sourceCollector struct{ src OpenAPISources }

var (
	sourceRequestsDesc = prometheus.NewDesc("codemode_openapi_requests_total",
		"HTTP requests sent to the OpenAPI source's API, retries included.", []string{"source"}, nil)
	sourceFailuresDesc = prometheus.NewDesc("codemode_openapi_failed_calls_total",
		"Calls of the OpenAPI source's operations that failed (an HTTP error status, a timeout, a refused redirect, a response past max_response_bytes).", []string{"source"}, nil)
	sourceInFlightDesc = prometheus.NewDesc("codemode_openapi_calls_in_flight",
		"Calls of the OpenAPI source's operations waiting on its API.", []string{"source"}, nil)
	sourceReadyDesc = prometheus.NewDesc("codemode_openapi_source_ready",
		"1 while the OpenAPI source's operations are registered.", []string{"source"}, nil)
)

func (c sourceCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, sourceRequestsDesc, sourceFailuresDesc, sourceInFlightDesc, sourceReadyDesc)
}

func (c sourceCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.src.States() {
		ready := 0.0
		if st.State == httpsource.StateReady {
			ready = 1
		}
		ch <- prometheus.MustNewConstMetric(sourceRequestsDesc, prometheus.CounterValue, float64(st.Requests), st.Name)
		ch <- prometheus.MustNewConstMetric(sourceFailuresDesc, prometheus.CounterValue, float64(st.Failures), st.Name)
		ch <- prometheus.MustNewConstMetric(sourceInFlightDesc, prometheus.GaugeValue, float64(st.Calls), st.Name)
		ch <- prometheus.MustNewConstMetric(sourceReadyDesc, prometheus.GaugeValue, ready, st.Name)
	}
}
