package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemode/codemode/admission"
	"github.com/codemode/codemode/app"
)

// DefaultHeartbeat is how often an idle event stream gets a comment line, so
// that proxies and clients can tell a quiet stream from a dead one.
const DefaultHeartbeat = 15 * time.Second

// afterCancelGrace is how long Serve waits, once the shutdown grace has run
// out and the remaining runs were cancelled, for their handlers to deliver
// the cancelled results before it closes every connection.
const afterCancelGrace = 5 * time.Second

// Options adjust New. The zero value works.
type Options struct {
	// Logger receives one line per run or step and the service's own
	// messages. Default: the App's logger.
	Logger *slog.Logger
	// MCP, when set, is mounted at /mcp (MCP over streamable HTTP) behind the
	// same body limit, API keys and rate limits as /v1. It learns what the
	// request's key may use from ScopeAllowed.
	MCP http.Handler
	// Playground, when set, serves GET / instead of the built-in page that
	// lists the API.
	Playground http.Handler
	// Metrics is the registry /metrics serves and the service's collectors
	// join (with the Go and process collectors); one Server per registry.
	// Default: a new registry, never the global one.
	Metrics *prometheus.Registry
	// Heartbeat is the comment interval of idle event streams. Default
	// DefaultHeartbeat.
	Heartbeat time.Duration
	// Upstreams, when set, is what GET /v1/upstreams reports; GET /readyz
	// waits for each to be ready.
	Upstreams Upstreams
	// OpenAPISources, when set, is what GET /v1/openapi_sources reports;
	// GET /readyz waits for each to be ready.
	OpenAPISources OpenAPISources
}

// limits are the server.* settings, from a validated configuration.
type limits struct {
	MaxBodyBytes   int64
	MaxInflight    int
	MaxQueued      int
	RateLimit      int
	RateWindow     time.Duration
	RequestTimeout time.Duration
	ShutdownGrace  time.Duration

	StreamWriteTimeout time.Duration
	WriteTimeout       time.Duration
}

// Server is the HTTP service over one App. It is an http.Handler; Serve
// runs it on a listener with graceful shutdown.
type Server struct {
	app         *app.App
	log         *slog.Logger
	cfg         limits
	keys        keyring // immutable
	runs        *runLimiter
	streamSlots *streamSlots
	budget      memoryBudget
	mcpTickets  mcpTickets // admitted /mcp requests, claimed by their tool calls
	metrics     *metrics
	heartbeat   time.Duration
	router      http.Handler
	crossSite   *crossSite     // immutable
	upstreams   Upstreams      // may be nil
	sources     OpenAPISources // may be nil
	// loopback is set by Serve when its listener is on loopback: every
	// request must then name a loopback host (see checkHost).
	loopback atomic.Bool

	// stopCtx ends when shutdown begins: event streams end and no new run
	// is admitted.
	stopCtx    context.Context
	stopCancel context.CancelFunc
}

// New returns the service for a. Its collectors count every execution of
// a's runtime (one Server per App). a.Config must be valid (config.Validate):
// New trusts it, and fails only when an API key's digest, an allowed origin
// or a metrics collector cannot be set up.
func New(a *app.App, opts Options) (*Server, error) {
	sc := a.Config.Server
	cfg := limits{
		MaxBodyBytes:   int64(sc.MaxBodyBytes),
		MaxInflight:    sc.MaxInflightRuns,
		MaxQueued:      sc.MaxQueuedRuns,
		RateLimit:      sc.RateLimit,
		RateWindow:     sc.RateWindow.Std(),
		RequestTimeout: sc.RequestTimeout.Std(),
		ShutdownGrace:  sc.ShutdownGrace.Std(),

		StreamWriteTimeout: sc.StreamWriteTimeout.Std(),
		WriteTimeout:       sc.WriteTimeout.Std(),
	}
	keys, err := newKeyring(a.Config.APIKeys)
	if err != nil {
		return nil, err
	}
	cross, err := newCrossSite(sc.AllowedOrigins, sc.AllowedHosts)
	if err != nil {
		return nil, err
	}
	budget := memoryBudgetFor(a.Config)
	reg := opts.Metrics
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	registerProcessCollectors(reg)
	m, err := newMetrics(reg, budget)
	if err == nil && a.Demo != nil {
		err = registerDemoState(reg, a.Demo)
	}
	if opts.Upstreams != nil && err == nil {
		err = reg.Register(upstreamCollector{opts.Upstreams})
	}
	if opts.OpenAPISources != nil && err == nil {
		err = reg.Register(sourceCollector{opts.OpenAPISources})
	}
	if st, ok := a.Store.(commitStatser); ok && err == nil {
		err = registerLogStats(reg, st)
	}
	if st, ok := a.Store.(checkpointStatser); ok && err == nil {
		err = registerCheckpointStats(reg, st)
	}
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	s := &Server{
		app:         a,
		log:         opts.Logger,
		cfg:         cfg,
		keys:        keys,
		runs:        newRunLimiter(cfg.MaxInflight, cfg.MaxQueued, m.inflight, m.queued),
		streamSlots: newStreamSlots(sc.MaxStreams, sc.MaxStreamsPerSession),
		metrics:     m,
		heartbeat:   opts.Heartbeat,
		crossSite:   cross,
		upstreams:   opts.Upstreams,
		sources:     opts.OpenAPISources,
		budget:      budget,
	}
	s.stopCtx, s.stopCancel = context.WithCancel(context.Background())
	if s.log == nil {
		s.log = a.Logger
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.heartbeat <= 0 {
		s.heartbeat = DefaultHeartbeat
	}
	pools := poolCollector{{"event_streams", s.streamSlots.pool}}
	// An MCP handler whose sessions are a pool shares it among the keys.
	if mh, ok := opts.MCP.(interface {
		SetTenant(func(*http.Request) string)
		Sessions() *admission.Pool
	}); ok {
		mh.SetTenant(func(r *http.Request) string { return tenant(r.Context()) })
		pools = append(pools, namedPool{"mcp_sessions", mh.Sessions()})
	}
	if err := reg.Register(pools); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	a.Runtime.AddObserver(m.observe)
	s.router = s.routes(opts)
	return s, nil
}

// routes builds the router. Every write of every reply is bounded by
// server.write_timeout (event streams by server.stream_write_timeout).
// Every route checks the Host first (on a loopback server); everything under /v1 (and /mcp) passes the cross-origin
// and content-type checks, the body limit, identification, rate limiting and
// authentication, in that order; every route except event streams is
// bounded by the request timeout.
func (s *Server) routes(opts Options) http.Handler {
	r := chi.NewRouter()
	r.Use(s.instrument, s.writeDeadlines, s.checkHost, middleware.GetHead)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, errorf(http.StatusNotFound, CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if r.Match(chi.NewRouteContext(), m, req.URL.Path) {
				w.Header().Add("Allow", m)
			}
		}
		s.writeError(w, errorf(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "%s is not allowed on %s", req.Method, req.URL.Path))
	})

	r.Get("/healthz", s.healthz)
	r.Get("/readyz", s.readyz)
	// With API keys, metrics need one (any key: they are not per scope).
	r.With(s.identify, s.authenticate).Method(http.MethodGet, "/metrics", s.metrics.handler())
	r.Get("/openapi.json", s.openAPI)
	if opts.Playground != nil {
		r.Method(http.MethodGet, "/", opts.Playground)
	} else {
		r.Get("/", s.handle(s.index))
	}

	guard := chi.Chain(s.limitBody, s.identify, s.rateLimit(), s.authenticate)
	if opts.MCP != nil {
		// An MCP handler that can claim its requests' admission holds it
		// for as long as their calls run, not as long as the requests.
		if m, ok := opts.MCP.(interface {
			SetAdmission(func(http.Header) (done func(), ok bool))
		}); ok {
			m.SetAdmission(s.mcpTickets.claim)
		}
		mcp := append(append(chi.Chain(s.checkOrigin(true), s.checkContentType), guard...), s.admitMCP)
		r.With(mcp...).Handle("/mcp", opts.MCP)
		r.With(mcp...).Handle("/mcp/*", opts.MCP)
	}
	r.Route("/v1", func(r chi.Router) {
		r.Use(s.checkOrigin(false), s.checkContentType)
		r.Use(guard...)
		// Event streams live as long as their client; the JSON form of the
		// same route applies the timeout itself.
		r.Get("/sessions/{id}/events", s.handle(s.events))

		r.Group(func(r chi.Router) {
			r.Use(s.withTimeout)
			r.Get("/scopes", s.handle(s.scopes))
			r.Get("/upstreams", upstreams(opts.Upstreams))
			r.Get("/openapi_sources", openAPISources(opts.OpenAPISources))
			r.Get("/tools", s.handle(s.tools))
			r.Get("/tools/search", s.handle(s.searchTools))
			r.Get("/sdk", s.handle(s.sdk))
			r.Get("/sdk/tokens", s.handle(s.sdkTokenCounts))
			r.Post("/run", s.handle(s.run))
			r.Get("/sessions", s.handle(s.listSessions))
			r.Post("/sessions", s.handle(s.createSession))
			r.Get("/sessions/{id}", s.handleSession(s.getSession))
			r.Delete("/sessions/{id}", s.handleSession(s.deleteSession))
			r.Post("/sessions/{id}/steps", s.handle(s.steps))
			r.Get("/sessions/{id}/messages", s.handleSession(s.messages))
			r.Get("/sessions/{id}/approvals", s.handleSession(s.approvals))
			r.Get("/sessions/{id}/calls/{call_id}", s.handleSession(s.call))
			r.Post("/sessions/{id}/approvals/{aid}", s.handle(s.answer))
		})
	})
	return r
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// Serve accepts connections on ln until ctx ends, then shuts down
// gracefully: it stops accepting, ends event streams, refuses queued and new
// runs (503), and lets the runs in flight finish and deliver their results
// within server.shutdown_grace; then it cancels what is left, gives the
// cancelled runs a moment to write their (cancelled) results, and closes
// every connection. It returns nil after a shutdown that ctx started, or the
// error that stopped the server. It does not close the App. A Server serves
// once: after Serve returns it admits no runs. When ln is on loopback, every
// request must name a loopback host or one of server.allowed_hosts (see
// checkHost); a handler served by other means does not check the Host.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	// Request contexts derive from base, not from ctx: the end of ctx starts
	// the shutdown; base ends only when the grace period is over.
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	s.loopback.Store(isLoopbackAddr(ln.Addr()))
	hs := &http.Server{
		Handler:           s,
		BaseContext:       func(net.Listener) context.Context { return base },
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	select {
	case err := <-served:
		s.stop()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "grace", s.cfg.ShutdownGrace)
	s.stop()
	graceCtx, cancelGrace := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancelGrace()
	err := hs.Shutdown(graceCtx)
	if err != nil {
		s.log.Warn("shutdown grace is over: cancelling the runs still in flight")
		cancelBase()
		lastCtx, cancelLast := context.WithTimeout(context.Background(), afterCancelGrace)
		defer cancelLast()
		if err = hs.Shutdown(lastCtx); err != nil {
			err = hs.Close()
		}
	}
	<-served // http.ErrServerClosed
	s.log.Info("stopped")
	return err
}

// stop begins the shutdown: event streams end and runs are no longer
// admitted. It is idempotent.
func (s *Server) stop() {
	s.stopCancel()
	s.runs.stop()
}
