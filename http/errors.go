package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/codemode/codemode/session"
)

// The codes of API errors: the "code" of {"error":{"code","message"}}. A
// failed program or tool is not an API error; it is a 200 with is_error.
const (
	CodeInvalidRequest       = "INVALID_REQUEST"        // 400: malformed body, missing or bad field
	CodeUnauthorized         = "UNAUTHORIZED"           // 401: missing or wrong API key
	CodeCrossOrigin          = "CROSS_ORIGIN"           // 403: a browser request from a page of another origin
	CodeHostNotAllowed       = "HOST_NOT_ALLOWED"       // 403: a Host that is not loopback, on a loopback server (DNS rebinding)
	CodeUnknownScope         = "UNKNOWN_SCOPE"          // 404: no such scope, or not one the key may use
	CodeUnknownSession       = "UNKNOWN_SESSION"        // 404: no such session, or in a scope the key may not use
	CodeUnknownApproval      = "UNKNOWN_APPROVAL"       // 404: no such approval
	CodeApprovalAnswered     = "APPROVAL_ANSWERED"      // 409: the approval was answered already
	CodeUnknownCall          = "UNKNOWN_CALL"           // 404: no such top-level call in the session
	CodeRunSuspended         = "RUN_SUSPENDED"          // 409: the session's run is suspended, waiting for approval
	CodeNotFound             = "NOT_FOUND"              // 404: no such route
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"     // 405
	CodeBodyTooLarge         = "BODY_TOO_LARGE"         // 413
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE" // 415: a request body that is not labelled application/json
	CodeRateLimited          = "RATE_LIMITED"           // 429, with Retry-After
	CodeTooManyStreams       = "TOO_MANY_STREAMS"       // 429: the session has server.max_streams_per_session event streams open
	CodeOverloaded           = "OVERLOADED"             // 503: every run slot taken and the queue full, the memory budget in use, or every event stream taken
	CodeRequestTimeout       = "REQUEST_TIMEOUT"        // 503: the request ended (server.request_timeout, or the client left) before its run started
	CodeShuttingDown         = "SHUTTING_DOWN"          // 503: the server is stopping
	CodeStoreUnavailable     = "STORE_UNAVAILABLE"      // 503: the session store failed (unreachable, disk full), with Retry-After
	CodeInternal             = "INTERNAL"               // 500: a fault of the service (logged)
)

// apiError is an error response: an HTTP status and the JSON error object.
type apiError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// RequestID is the request's X-Request-Id, so that a client can quote
	// it and an operator find the request's log lines.
	RequestID string `json:"request_id,omitempty"`
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, CodeInvalidRequest, format, args...)
}

func unknownScope(scope string) *apiError {
	return errorf(http.StatusNotFound, CodeUnknownScope, "unknown scope %q", scope)
}

func unknownSession(id string) *apiError {
	return errorf(http.StatusNotFound, CodeUnknownSession, "unknown session %q", id)
}

// marshal encodes v as JSON without HTML escaping (the API is not HTML),
// followed by a newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// writeJSON writes v as the JSON response body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	status, data := encodeJSON(status, v)
	writeBody(w, status, data)
}

// encodeJSON returns v's JSON body, or, should it not encode, a 500's.
func encodeJSON(status int, v any) (int, []byte) {
	data, err := marshal(v)
	if err != nil {
		// Every response type here marshals; a failure is a bug, reported as one.
		return http.StatusInternalServerError,
			fmt.Appendf(nil, `{"error":{"code":%q,"message":"the response could not be encoded"}}`+"\n", CodeInternal)
	}
	return status, data
}

// sendBody writes an encoded JSON body and sends it at once, so that what
// the handler does after it (its metrics and log lines) does not delay it.
func sendBody(w http.ResponseWriter, status int, data []byte) {
	writeBody(w, status, data)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// writeBody writes an encoded JSON body with status and its length (which
// lets instrument send it before logging).
func writeBody(w http.ResponseWriter, status int, data []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	_ = writeChunks(w, data)
}

// writeChunks writes data in writes of at most listChunk bytes: each write
// has server.write_timeout to reach the client (see writeDeadlines), so a
// large reply asks a client for a chunk per timeout, not the whole.
func writeChunks(w http.ResponseWriter, data []byte) error {
	for len(data) > 0 {
		n := min(len(data), listChunk)
		if _, err := w.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// handlerFunc is a route's handler that returns its API error rather than
// writing it: Server.handle writes it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts h to an http.Handler. An *apiError h returns is written by
// writeError; any other error is an internal fault (a logged 500, see
// internal). A handler returns an error only before it has written.
func (s *Server) handle(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		var e *apiError
		if !errors.As(err, &e) {
			e = s.internal(r, "handle "+r.URL.Path, err)
		}
		s.writeError(w, e)
	}
}

// sessionHandlerFunc is a handler below /v1/sessions/{id}: it is given the
// session the path names, found and of a scope the request's key may use.
type sessionHandlerFunc func(w http.ResponseWriter, r *http.Request, sess session.Session) error

// handleSession is handle for a sessionHandlerFunc: an invalid or unknown
// session id, or a session the key may not see, is answered before h runs.
func (s *Server) handleSession(h sessionHandlerFunc) http.HandlerFunc {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		sess, e := s.session(r, chi.URLParam(r, "id"))
		if e != nil {
			return e
		}
		return h(w, r, sess)
	})
}

// writeError writes e as {"error":{"code","message","request_id"}} and
// counts it. The request id is the one instrument set on the response.
func (s *Server) writeError(w http.ResponseWriter, e *apiError) {
	s.metrics.apiErrors.WithLabelValues(e.Code).Inc()
	if e.Code == CodeStoreUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	if e.RequestID == "" {
		c := *e
		c.RequestID = w.Header().Get(headerRequestID)
		e = &c
	}
	writeJSON(w, e.Status, struct {
		Error *apiError `json:"error"`
	}{e})
}

// decodeBody reads the request body as exactly one JSON object into dst,
// rejecting unknown fields and trailing data. An empty body is accepted
// (dst keeps its zero value) only when allowEmpty is set. The body is read
// through the server's size limit: a body over it is a 413.
func decodeBody(r *http.Request, dst any, allowEmpty bool) *apiError {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return bodyTooLarge(tooBig.Limit)
		}
		return badRequest("read request body: %v", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if allowEmpty {
			return nil
		}
		return badRequest("the request body is empty: want a JSON object")
	}
	if t := firstByte(data); t != '{' {
		return badRequest("the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return badRequest("invalid JSON body: %s", jsonMessage(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("invalid JSON body: unexpected data after the object")
	}
	return nil
}

func bodyTooLarge(limit int64) *apiError {
	return errorf(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "the request body is larger than %d bytes", limit)
}

func firstByte(data []byte) byte {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 {
		return 0
	}
	return data[0]
}

// jsonMessage turns encoding/json's errors into messages that name the field.
func jsonMessage(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field != "" {
			return fmt.Sprintf("field %q: want %s, got %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
		}
		return fmt.Sprintf("want %s, got %s", jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("%s (at byte %d)", strings.TrimPrefix(syntaxErr.Error(), "json: "), syntaxErr.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends early"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names a Go kind as the JSON type a client must send.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	}
	return kind
}

// internal turns an unexpected failure into an API error: a closed store
// during shutdown is a 503, anything else a logged 500 whose details stay in
// the log.
func (s *Server) internal(r *http.Request, what string, err error) *apiError {
	if errors.Is(err, session.ErrClosed) || s.isStopping() {
		return errorf(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down")
	}
	if errors.Is(err, session.ErrUnavailable) {
		return s.storeUnavailable(r, what, err)
	}
	s.logFor(r).Error("request failed", "method", r.Method, "path", r.URL.Path, "what", what, "err", err)
	return errorf(http.StatusInternalServerError, CodeInternal, "internal error (%s)", what)
}

// storeFailed maps a failure of a call to the session store that has no
// meaning of its own (not ErrNotFound and the like): the store did not
// answer, so it is a 503 STORE_UNAVAILABLE, whatever the store called it.
func (s *Server) storeFailed(r *http.Request, what string, err error) *apiError {
	if errors.Is(err, session.ErrClosed) || s.isStopping() {
		return errorf(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down")
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errorf(http.StatusServiceUnavailable, CodeRequestTimeout, "the request ended before the session store answered (%s)", what)
	}
	return s.storeUnavailable(r, what, err)
}

// storeUnavailable is the 503 of a store failure, logged.
func (s *Server) storeUnavailable(r *http.Request, what string, err error) *apiError {
	s.logFor(r).Error("session store failed", "method", r.Method, "path", r.URL.Path, "what", what, "err", err)
	return errorf(http.StatusServiceUnavailable, CodeStoreUnavailable, "the session store failed (%s); retry later", what)
}

func (s *Server) isStopping() bool { return s.stopCtx.Err() != nil }
