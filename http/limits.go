package httpapi

import (
	"container/list"
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/httprate"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemode/codemode/admission"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/bytesize"
)

// limitBody caps request bodies at server.max_body_bytes: a declared length over it is
// refused at once, and a longer body fails when read (decodeBody turns that
// into the same 413). While the request is served, its body's size (the
// limit, when it is not declared) is reserved from the memory budget; a
// body that does not fit is refused with 503.
func (s *Server) limitBody(next http.Handler) http.Handler {
	limit := s.cfg.MaxBodyBytes
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			s.writeError(w, bodyTooLarge(limit))
			return
		}
		size := r.ContentLength
		if size < 0 {
			size = limit
		}
		free, err := s.budget.Reserve(size)
		if err != nil {
			s.refuseMemory(w, r, "request body", err)
			return
		}
		release := sync.OnceFunc(free)
		defer release()
		r = r.WithContext(context.WithValue(r.Context(), bodyReleaseKey{}, release))
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}

// bodyReleaseKey carries, in a request's context, the release of its body's
// reservation (limitBody), which may run before the handler returns.
type bodyReleaseKey struct{}

// releaseBody returns the request body's reservation now (it is returned
// when the handler ends otherwise).
func releaseBody(r *http.Request) {
	if release, ok := r.Context().Value(bodyReleaseKey{}).(func()); ok {
		release()
	}
}

// memoryBudget is the service-wide memory budget that runs and request
// bodies reserve from while they are served (an *admission.Budget).
type memoryBudget interface {
	// Reserve takes n bytes or fails; release returns them.
	Reserve(n int64) (release func(), err error)
	Limit() int64
	InUse() int64
}

// memoryBudgetFor makes the budget of server.memory_budget (0: three
// quarters of the machine's memory, and at least one run with a full request
// body); config.Validate refuses a set budget smaller than that.
func memoryBudgetFor(cfg config.Config) *admission.Budget {
	limit := int64(cfg.Server.MemoryBudget)
	if limit == 0 {
		limit = max(admission.DefaultLimit(), int64(cfg.Limits.Memory)+int64(cfg.Server.MaxBodyBytes))
	}
	return admission.NewBudget(limit)
}

// refuseMemory writes the 503 of a reservation the memory budget refused.
func (s *Server) refuseMemory(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.logFor(r).Warn("refused: memory budget", "what", what, "reason", err)
	w.Header().Set("Retry-After", "1")
	s.writeError(w, errorf(http.StatusServiceUnavailable, CodeOverloaded,
		"the server's memory budget (server.memory_budget, %s) cannot take this %s now: %s of it are reserved by the runs and requests in flight; retry later",
		bytesize.Format(s.budget.Limit()), what, bytesize.Format(s.budget.InUse())))
}

// rateLimit limits each key (or anonymous client address) to
// server.rate_limit requests per server.rate_window, with a sliding window;
// beyond it a 429 with Retry-After. A limit of 0 turns it off.
func (s *Server) rateLimit() func(http.Handler) http.Handler {
	limit, window := s.cfg.RateLimit, s.cfg.RateWindow
	if limit <= 0 {
		return func(next http.Handler) http.Handler { return next }
	}
	retryAfter := strconv.Itoa(max(1, int(math.Ceil(window.Seconds()))))
	rl := httprate.NewRateLimiter(limit, window,
		httprate.WithKeyFuncs(rateKey),
		httprate.WithLimitHandler(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", retryAfter)
			s.writeError(w, errorf(http.StatusTooManyRequests, CodeRateLimited,
				"rate limit exceeded: at most %d requests per %s; retry after %s seconds", limit, window, retryAfter))
		}),
	)
	return rl.Handler
}

// withTimeout bounds a request by server.request_timeout: its context ends
// then (a run in progress is cancelled, a queued one gives up), and reading
// its body must finish by then. Event streams are exempt.
func (s *Server) withTimeout(next http.Handler) http.Handler {
	d := s.cfg.RequestTimeout
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		// Not every ResponseWriter supports deadlines (httptest's does not).
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Errors of runLimiter.acquire.
var (
	errOverloaded = errors.New("every run slot is taken and the queue is full")
	errStopping   = errors.New("the server is shutting down")
)

// runLimiter bounds the runs in flight to slots, with a FIFO queue of at
// most queueCap waiting runs; beyond that a run is refused at once. A queued
// run gives up when its context ends.
type runLimiter struct {
	slots, queueCap    int
	inflightG, queuedG prometheus.Gauge

	mu       sync.Mutex
	inflight int       // runs holding a slot; guarded by mu
	queue    list.List // of *runWaiter, oldest first; guarded by mu
	stopped  bool      // no new runs; guarded by mu
}

// runWaiter is a queued run. ready is closed when it is granted a slot
// (err nil) or turned away (err set); both are written under runLimiter.mu
// before the close.
type runWaiter struct {
	ready chan struct{}
	err   error
}

func newRunLimiter(slots, queueCap int, inflight, queued prometheus.Gauge) *runLimiter {
	return &runLimiter{slots: slots, queueCap: queueCap, inflightG: inflight, queuedG: queued}
}

// acquire takes a run slot, waiting in the queue when all are taken. It
// fails at once with errOverloaded when the queue is full or errStopping
// after stop, and with ctx.Err() when ctx ends while queued. On success the
// caller must call release exactly once.
func (l *runLimiter) acquire(ctx context.Context) (release func(), err error) {
	l.mu.Lock()
	switch {
	case l.stopped:
		l.mu.Unlock()
		return nil, errStopping
	case l.inflight < l.slots && l.queue.Len() == 0:
		l.inflight++
		l.gauges()
		l.mu.Unlock()
		return l.releaser(), nil
	case l.queue.Len() >= l.queueCap:
		l.mu.Unlock()
		return nil, errOverloaded
	}
	w := &runWaiter{ready: make(chan struct{})}
	el := l.queue.PushBack(w)
	l.gauges()
	l.mu.Unlock()

	select {
	case <-w.ready:
		if w.err != nil {
			return nil, w.err
		}
		return l.releaser(), nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	select {
	case <-w.ready:
		// Granted (or turned away) while ctx ended: pass the slot on.
		l.mu.Unlock()
		if w.err == nil {
			l.release()
		}
	default:
		l.queue.Remove(el)
		l.gauges()
		l.mu.Unlock()
	}
	return nil, ctx.Err()
}

func (l *runLimiter) releaser() func() {
	var once sync.Once
	return func() { once.Do(l.release) }
}

// release gives the slot to the oldest queued run, or frees it.
func (l *runLimiter) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if front := l.queue.Front(); front != nil {
		w := l.queue.Remove(front).(*runWaiter)
		close(w.ready) // the slot moves to w: inflight is unchanged
	} else {
		l.inflight--
	}
	l.gauges()
}

// stop refuses new runs and turns away every queued one with errStopping;
// runs holding a slot continue.
func (l *runLimiter) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	for e := l.queue.Front(); e != nil; e = e.Next() {
		w := e.Value.(*runWaiter)
		w.err = errStopping
		close(w.ready)
	}
	l.queue.Init()
	l.gauges()
}

// gauges publishes the counts; the caller holds mu.
func (l *runLimiter) gauges() {
	l.inflightG.Set(float64(l.inflight))
	l.queuedG.Set(float64(l.queue.Len()))
}
