package httpapi

import (
	"net/http"
	"sync/atomic"
	"time"
)

// writeDeadlines bounds every write of a reply by server.write_timeout:
// before each WriteHeader, Write and Flush, and once more when the handler
// returns (for what the server flushes after it), the connection's write
// deadline is set that far ahead. A client that stops reading thus has its
// connection closed once one write has waited that long, and the handler,
// its write failed, lets go of the reply; a handler that writes a large
// reply in chunks gets the time per chunk. A handler that sets deadlines
// itself through http.ResponseController (event streams, with
// server.stream_write_timeout) takes over from its first call. A writer
// that supports no deadline (httptest's recorder) writes without.
func (s *Server) writeDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: s.cfg.WriteTimeout}
		// A keep-alive connection keeps the deadline of its last reply.
		dw.extend()
		defer dw.extend()
		next.ServeHTTP(dw, r)
	})
}

// deadlineWriter is writeDeadlines' ResponseWriter.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController // of the wrapped writer
	timeout time.Duration
	own     atomic.Bool // the handler sets the deadlines
}

func (d *deadlineWriter) extend() {
	if !d.own.Load() {
		_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	}
}

func (d *deadlineWriter) WriteHeader(code int) {
	d.extend()
	d.ResponseWriter.WriteHeader(code)
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	d.extend()
	return d.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (d *deadlineWriter) Flush() { _ = d.FlushError() }

// FlushError is what http.ResponseController.Flush calls.
func (d *deadlineWriter) FlushError() error {
	d.extend()
	return d.rc.Flush()
}

// SetWriteDeadline is what http.ResponseController.SetWriteDeadline calls:
// the handler manages the deadlines from now on.
func (d *deadlineWriter) SetWriteDeadline(t time.Time) error {
	d.own.Store(true)
	return d.rc.SetWriteDeadline(t)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
