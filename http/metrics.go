package httpapi

import (
	"errors"
	"net/http"
	"runtime/debug"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
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
	runDuration    *prometheus.HistogramVec // entry
	subCalls       prometheus.Counter
	resultErrors   *prometheus.CounterVec // code: failed results, top-level and nested
	inflight       prometheus.Gauge
	queued         prometheus.Gauge
	streams        prometheus.Gauge
	streamsDropped prometheus.Counter
	requests       *prometheus.CounterVec // route, method, status
	apiErrors      *prometheus.CounterVec // code: API error responses
}

func newMetrics(reg *prometheus.Registry, budget memoryBudget) (*metrics, error) {
	m := &metrics{
		reg: reg,
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codemode_runs_total",
			Help: "Runs (POST /v1/run) and steps (POST /v1/sessions/{id}/steps) by outcome: ok, error (a failed program or tool), overloaded (refused with 503), failed (no result).",
		}, []string{"entry", "outcome"}),
		runDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "codemode_run_duration_seconds",
			Help:    "Wall-clock time of admitted runs and steps, from admission to result.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"entry"}),
		subCalls: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "codemode_sub_calls_total",
			Help: "SDK calls made by run_code programs (settled, whatever their outcome).",
		}),
		resultErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codemode_errors_total",
			Help: "Failed tool results (top-level calls and SDK sub-calls) by result code.",
		}, []string{"code"}),
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
		apiErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codemode_http_errors_total",
			Help: "API error responses by error code.",
		}, []string{"code"}),
	}
	budgetLimit := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "codemode_memory_budget_bytes",
		Help: "The service-wide memory budget (server.memory_budget) that runs and request bodies reserve from.",
	}, func() float64 { return float64(budget.Limit()) })
	budgetInUse := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "codemode_memory_reserved_bytes",
		Help: "Bytes of the memory budget reserved now: limits.memory per run in flight, plus the bodies of requests being served.",
	}, func() float64 { return float64(budget.InUse()) })
	for _, c := range []prometheus.Collector{budgetLimit, budgetInUse, m.runs, m.runDuration, m.subCalls, m.resultErrors, m.inflight, m.queued, m.streams, m.streamsDropped, m.requests, m.apiErrors} {
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

// observe is a runtime observer: it counts sub-calls and failed results of
// every execution, whatever entry started it (runs, steps, MCP).
func (m *metrics) observe(c runtime.Call, r *runtime.Result) {
	if c.Nested() {
		m.subCalls.Inc()
	}
	if r.IsError() {
		code := r.Code()
		if !knownCodes[code] {
			code = "OTHER"
		}
		m.resultErrors.WithLabelValues(string(code)).Inc()
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// instrument counts every request by route pattern, method and status, and
// turns a handler panic into a logged 500 (http.ErrAbortHandler is passed on:
// it is how a handler aborts a response on purpose).
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		defer func() {
			p := recover()
			if p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic serving a request", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				if ww.Status() == 0 {
					s.writeError(ww, errorf(http.StatusInternalServerError, CodeInternal, "internal error"))
				}
			}
			route := "unmatched"
			if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
				route = rc.RoutePattern()
			}
			method := r.Method
			if !knownMethods[method] {
				method = "OTHER"
			}
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			s.metrics.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
		}()
		next.ServeHTTP(ww, r)
	})
}
