package httpapi

import (
	"errors"
	"net/http"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/codemode/codemode/admission"
	"github.com/codemode/codemode/internal/version"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/sqlite"
)

// The outcomes of a run (label "outcome" of codemode_runs_total).
const (
	outcomeOK         = "ok"         // every result succeeded
	outcomeError      = "error"      // a program or tool failed: a 200 with is_error
	outcomeOverloaded = "overloaded" // refused at admission: 503
	outcomeFailed     = "failed"     // admitted, but no result: the service failed or the request ended first
)

// metrics are the service's Prometheus collectors, in their own registry.
type metrics struct {
	reg            *prometheus.Registry
	runs           *prometheus.CounterVec   // entry (run|step), outcome
	runDuration    *prometheus.HistogramVec // entry, outcome, kind
	subCalls       prometheus.Counter
	callDuration   *prometheus.HistogramVec // tool, outcome: SDK sub-calls
	resultErrors   *prometheus.CounterVec   // code, kind: failed results, top-level and nested
	inflight       prometheus.Gauge
	queued         prometheus.Gauge
	streams        prometheus.Gauge
	streamsDropped prometheus.Counter
	requests       *prometheus.CounterVec   // route, method, status
	httpDuration   *prometheus.HistogramVec // route, method, code
	apiErrors      *prometheus.CounterVec   // code: API error responses
}

// durationBuckets are the buckets of the duration histograms, in seconds:
// from a cached SDK call to a run at a generous limits.timeout.
var durationBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

func newMetrics(reg *prometheus.Registry, budget memoryBudget) (*metrics, error) {
	m := &metrics{
		reg: reg,
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codemode_runs_total",
			Help: "Runs (POST /v1/run) and steps (POST /v1/sessions/{id}/steps) by outcome: ok, error (a failed program or tool), overloaded (refused with 503), failed (no result).",
		}, []string{"entry", "outcome"}),
		runDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "codemode_run_duration_seconds",
			Help:    "Wall-clock time of admitted runs and steps, from admission to result, by outcome (ok, error, failed) and, for errors, kind: the program's failure kind (syntax, runtime, timeout, limit, cancelled) or the lower-cased result code.",
			Buckets: durationBuckets,
		}, []string{"entry", "outcome", "kind"}),
		subCalls: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "codemode_sub_calls_total",
			Help: "SDK calls made by run_code programs (settled, whatever their outcome).",
		}),
		callDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "codemode_tool_call_duration_seconds",
			Help:    "Wall-clock time of the SDK calls of run_code programs, from entering the pipeline to the result (approval waits included), by tool and outcome (ok, error).",
			Buckets: durationBuckets,
		}, []string{"tool", "outcome"}),
		resultErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codemode_errors_total",
			Help: "Failed tool results (top-level calls and SDK sub-calls) by result code and, for CODE_RUN_FAILED, the program's failure kind.",
		}, []string{"code", "kind"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "codemode_runs_in_flight",
			Help: "Runs and steps holding a run slot.",
		}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "codemode_runs_queued",
			Help: "Runs and steps waiting for a run slot.",
		}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "codemode_event_streams",
			Help: "Open text/event-stream connections.",
		}),
		streamsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "codemode_event_streams_dropped_total",
			Help: "Event streams dropped because the reader did not take a write within server.stream_write_timeout.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codemode_http_requests_total",
			Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "codemode_http_request_duration_seconds",
			Help:    "Time to serve HTTP requests, until the handler returned (an event stream: until it ended), by route pattern, method and status code.",
			Buckets: durationBuckets,
		}, []string{"route", "method", "code"}),
		apiErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codemode_http_errors_total",
			Help: "API error responses by error code.",
		}, []string{"code"}),
	}
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "codemode_build_info",
		Help: "Always 1: the version of codemode and of Go it was built with.",
	}, []string{"version", "goversion"})
	buildInfo.WithLabelValues(version.String(), goruntime.Version()).Set(1)
	budgetLimit := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "codemode_memory_budget_bytes",
		Help: "The service-wide memory budget (server.memory_budget) that runs and request bodies reserve from.",
	}, func() float64 { return float64(budget.Limit()) })
	budgetInUse := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "codemode_memory_reserved_bytes",
		Help: "Bytes of the memory budget reserved now: limits.memory per run in flight, plus the bodies of requests being served.",
	}, func() float64 { return float64(budget.InUse()) })
	for _, c := range []prometheus.Collector{budgetLimit, budgetInUse, buildInfo, m.runs, m.runDuration, m.subCalls, m.callDuration, m.resultErrors, m.inflight, m.queued, m.streams, m.streamsDropped, m.requests, m.httpDuration, m.apiErrors} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// demoUsage is what the demo tool pack reports of its state (*tools.Pack).
type demoUsage interface {
	Usage() (sessions int, bytes int64)
}

// registerDemoState adds the demo tools' state to reg: how many sessions hold some, and its
// bytes, against the demo_state quotas.
func registerDemoState(reg *prometheus.Registry, demo demoUsage) error {
	return errors.Join(
		reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "codemode_demo_state_sessions",
			Help: "Sessions holding demo tool state (kv entries, files); bounded by demo_state.max_sessions.",
		}, func() float64 { n, _ := demo.Usage(); return float64(n) })),
		reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "codemode_demo_state_bytes",
			Help: "Bytes of demo tool state of all sessions; bounded by demo_state.max_total_bytes.",
		}, func() float64 { _, b := demo.Usage(); return float64(b) })),
	)
}

// commitStatser is a store that counts its group commits (SQLite,
// PostgreSQL).
type commitStatser interface {
	Stats() session.CommitStats
}

// logStatMetrics are the session log's group commits: how many commits and
// how long they took (their ratio is a commit's mean time, its flush
// included), how many writes they took (over commits, the writes a flush
// serves), and what waits now.
var logStatMetrics = stateMetrics[session.CommitStats]{
	{prometheus.NewDesc("codemode_log_commits_total", "Group commits of the session log: transactions committed, each one flush with durability: full.", nil, nil),
		prometheus.CounterValue, func(s session.CommitStats) float64 { return float64(s.Commits) }},
	{prometheus.NewDesc("codemode_log_commit_failures_total", "Group commits of the session log that failed (every write in them failed).", nil, nil),
		prometheus.CounterValue, func(s session.CommitStats) float64 { return float64(s.Failed) }},
	{prometheus.NewDesc("codemode_log_commit_seconds_total", "Time spent in the session log's group commits, their flushes included.", nil, nil),
		prometheus.CounterValue, func(s session.CommitStats) float64 { return s.Busy.Seconds() }},
	{prometheus.NewDesc("codemode_log_writes_total", "Writes taken into the session log's group commits (a run's or step's writes; failed ones included).", nil, nil),
		prometheus.CounterValue, func(s session.CommitStats) float64 { return float64(s.Writes) }},
	{prometheus.NewDesc("codemode_log_events_total", "Events appended to the session log.", nil, nil),
		prometheus.CounterValue, func(s session.CommitStats) float64 { return float64(s.Events) }},
	{prometheus.NewDesc("codemode_log_queued_writes", "Writes waiting for the session log's next group commit.", nil, nil),
		prometheus.GaugeValue, func(s session.CommitStats) float64 { return float64(s.Queued) }},
}

// registerLogStats adds logStatMetrics to reg, read from the store at each
// scrape.
func registerLogStats(reg *prometheus.Registry, st commitStatser) error {
	return reg.Register(statsCollector[session.CommitStats]{st.Stats, logStatMetrics})
}

// checkpointStatser is a store that checkpoints its WAL off the commit
// path (SQLite).
type checkpointStatser interface {
	CheckpointStats() sqlite.CheckpointStats
}

// checkpointStatMetrics are the SQLite log's checkpoints: how many ran, how
// many failed or found another running, how long they took, and the WAL
// pages the last one could not copy yet.
var checkpointStatMetrics = stateMetrics[sqlite.CheckpointStats]{
	{prometheus.NewDesc("codemode_log_checkpoints_total", "WAL checkpoints of the SQLite session log, run off the commit path.", nil, nil),
		prometheus.CounterValue, func(s sqlite.CheckpointStats) float64 { return float64(s.Checkpoints) }},
	{prometheus.NewDesc("codemode_log_checkpoint_failures_total", "WAL checkpoints of the SQLite session log that failed or found another running (retried later).", nil, nil),
		prometheus.CounterValue, func(s sqlite.CheckpointStats) float64 { return float64(s.Failed) }},
	{prometheus.NewDesc("codemode_log_checkpoint_seconds_total", "Time spent in WAL checkpoints of the SQLite session log, their flushes included.", nil, nil),
		prometheus.CounterValue, func(s sqlite.CheckpointStats) float64 { return s.Busy.Seconds() }},
	{prometheus.NewDesc("codemode_log_checkpoint_pages_left", "WAL pages the last checkpoint of the SQLite session log found committed but could not copy (a reader or a commit held them).", nil, nil),
		prometheus.GaugeValue, func(s sqlite.CheckpointStats) float64 { return float64(s.Left) }},
}

// registerCheckpointStats adds checkpointStatMetrics to reg, read from the
// store at each scrape.
func registerCheckpointStats(reg *prometheus.Registry, st checkpointStatser) error {
	return reg.Register(statsCollector[sqlite.CheckpointStats]{st.CheckpointStats, checkpointStatMetrics})
}

// stateMetric is one metric of a state S that a collector reads at each
// scrape: its desc, its type and its value.
type stateMetric[S any] struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(S) float64
}

// stateMetrics is a collector's table of metrics, which its Describe and
// Collect both iterate.
type stateMetrics[S any] []stateMetric[S]

func (t stateMetrics[S]) describe(ch chan<- *prometheus.Desc) {
	for _, m := range t {
		ch <- m.desc
	}
}

// collect sends each metric's value of st; labels are the values of the
// descs' variable labels.
func (t stateMetrics[S]) collect(ch chan<- prometheus.Metric, st S, labels ...string) {
	for _, m := range t {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(st), labels...)
	}
}

// statsCollector exports metrics of what read returns, read once at each
// scrape; the metrics have no variable labels.
type statsCollector[S any] struct {
	read    func() S
	metrics stateMetrics[S]
}

func (c statsCollector[S]) Describe(ch chan<- *prometheus.Desc) { c.metrics.describe(ch) }
func (c statsCollector[S]) Collect(ch chan<- prometheus.Metric) { c.metrics.collect(ch, c.read()) }

// registerProcessCollectors adds the Go runtime and process collectors to
// reg when it has none yet.
func registerProcessCollectors(reg *prometheus.Registry) {
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		_ = reg.Register(c) // AlreadyRegistered: the caller's registry has them
	}
}

// knownCodes bounds the "code" label of codemode_errors_total.
var knownCodes = map[registry.Code]bool{
	registry.CodeUnknownTool: true, registry.CodeInvalidArgs: true, registry.CodeInvalidToolOutput: true,
	registry.CodeDenied: true, registry.CodeApprovalRejected: true, registry.CodeToolTimeout: true,
	registry.CodeAborted: true, registry.CodeAbortedBeforeDispatch: true, registry.CodeToolFailed: true,
	registry.CodeCodeRunFailed: true, registry.CodeInternal: true,
}

// knownKinds bounds the failure kinds of CODE_RUN_FAILED in labels.
var knownKinds = map[string]bool{
	sandbox.KindSyntax: true, sandbox.KindRuntime: true, sandbox.KindTimeout: true,
	sandbox.KindLimit: true, sandbox.KindCancelled: true,
}

// errorLabels are the bounded code and kind labels of a failed result: kind
// is the program's failure kind for CODE_RUN_FAILED, else "".
func errorLabels(e *runtime.ErrorInfo) (code, kind string) {
	if e == nil {
		return "", ""
	}
	code = string(e.Code)
	if !knownCodes[e.Code] {
		code = "OTHER"
	}
	if e.Kind != "" {
		kind = e.Kind
		if !knownKinds[kind] {
			kind = "other"
		}
	}
	return code, kind
}

// failureKind is the "kind" label of a failed run's duration: the
// program's failure kind, else its result code in lower case (e.g.
// "aborted"); "" for a run that did not fail.
func failureKind(e *runtime.ErrorInfo) string {
	code, kind := errorLabels(e)
	if kind != "" || code == "" {
		return kind
	}
	return strings.ToLower(code)
}

// observe is a runtime observer: it counts and times the sub-calls and
// counts the failed results of every execution, whatever entry started it
// (runs, steps, MCP).
func (m *metrics) observe(c runtime.Call, r *runtime.Result) {
	if c.Nested() {
		m.subCalls.Inc()
		// Tool names come from the registry; a name that resolved to no
		// tool came from the program and is not a label.
		tool, outcome := "unknown", outcomeOK
		if c.Tool != nil {
			tool = c.Name
		}
		if r.IsError() {
			outcome = outcomeError
		}
		if !c.Started.IsZero() {
			m.callDuration.WithLabelValues(tool, outcome).Observe(time.Since(c.Started).Seconds())
		}
	}
	if r.IsError() {
		m.resultErrors.WithLabelValues(errorLabels(r.Error())).Inc()
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// poolCollector exports the pools shared among API keys (admission.Pool),
// read at each scrape: label pool is "mcp_sessions" or "event_streams";
// label key is an API key's name ("key:" and 16 hex digits of its digest),
// or "" on a server without keys.
type poolCollector []namedPool

type namedPool struct {
	name string
	pool *admission.Pool
}

// poolHeldDesc is the one pool metric per key holding slots.
var poolHeldDesc = prometheus.NewDesc("codemode_pool_held",
	"Slots of a pool held by an API key: MCP sessions (server.max_mcp_sessions) or event streams (server.max_streams).",
	[]string{"pool", "key"}, nil)

// poolMetrics are the metrics of a whole pool.
var poolMetrics = stateMetrics[admission.PoolStats]{
	{prometheus.NewDesc("codemode_pool_share",
		"The share of a pool each key holding slots may keep when the pool is full: its size divided among those keys. A key under it takes the idle slot of the key most over it.",
		[]string{"pool"}, nil),
		prometheus.GaugeValue, func(st admission.PoolStats) float64 { return float64(st.Share) }},
	{prometheus.NewDesc("codemode_pool_size",
		"The size of a pool shared among API keys.", []string{"pool"}, nil),
		prometheus.GaugeValue, func(st admission.PoolStats) float64 { return float64(st.Max) }},
	{prometheus.NewDesc("codemode_pool_evictions_total",
		"Slots of a full pool given from a key over its share to one under it (the MCP session closed, the event stream ended).",
		[]string{"pool"}, nil),
		prometheus.CounterValue, func(st admission.PoolStats) float64 { return float64(st.Evictions) }},
	{prometheus.NewDesc("codemode_pool_refusals_total",
		"Slots of a pool refused: it was full, and the key held its share or no key over its share had an idle slot.",
		[]string{"pool"}, nil),
		prometheus.CounterValue, func(st admission.PoolStats) float64 { return float64(st.Refusals) }},
}

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- poolHeldDesc
	poolMetrics.describe(ch)
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c {
		st := p.pool.Stats()
		for key, n := range st.Held {
			ch <- prometheus.MustNewConstMetric(poolHeldDesc, prometheus.GaugeValue, float64(n), p.name, key)
		}
		poolMetrics.collect(ch, st, p.name)
	}
}
