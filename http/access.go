package httpapi

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/codemode/codemode/internal/requestid"
	"github.com/codemode/codemode/internal/version"
)

// headerRequestID names a request: the client's when it sends a valid one
// (see requestid.Valid), else one the server mints; either way echoed in the
// response.
const headerRequestID = "X-Request-Id"

var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// instrument is the first middleware of every request. It names the request
// (X-Request-Id, carried in its context for the log lines and events it
// causes), sets the Server header, counts and times the request by route
// pattern, method and status, writes its access log line, and turns a
// handler panic into a logged 500 (http.ErrAbortHandler is passed on: it is
// how a handler aborts a response on purpose).
func (s *Server) instrument(next http.Handler) http.Handler {
	server := "codemode/" + version.String()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get(headerRequestID)
		if !requestid.Valid(id) {
			id = requestid.New()
		}
		h := w.Header()
		h.Set(headerRequestID, id)
		h.Set("Server", server)
		r = r.WithContext(requestid.With(r.Context(), id))
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		defer func() {
			p := recover()
			if p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.logFor(r).Error("panic serving a request", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				if ww.Status() == 0 {
					s.writeError(ww, errorf(http.StatusInternalServerError, CodeInternal, "internal error"))
				}
			}
			elapsed := time.Since(start)
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
			code := strconv.Itoa(status)
			s.metrics.requests.WithLabelValues(route, method, code).Inc()
			s.metrics.httpDuration.WithLabelValues(route, method, code).Observe(elapsed.Seconds())
			s.log.LogAttrs(r.Context(), slog.LevelInfo, "http request",
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.String("route", route),
				slog.Int("status", status),
				slog.Duration("duration", elapsed),
				slog.Int("bytes", ww.BytesWritten()),
				slog.String("request_id", id),
				slog.String("remote", r.RemoteAddr),
			)
		}()
		next.ServeHTTP(ww, r)
		// A reply whose length is known is complete: send it before the
		// logging and counting above, which no client needs to wait for.
		if ww.Status() != 0 && ww.Header().Get("Content-Length") != "" {
			if f, ok := ww.(http.Flusher); ok {
				f.Flush()
			}
		}
	})
}

// logFor is the server's logger for the lines a request causes: they carry
// its request id.
func (s *Server) logFor(r *http.Request) *slog.Logger {
	if id := requestid.From(r.Context()); id != "" {
		return s.log.With("request_id", id)
	}
	return s.log
}
