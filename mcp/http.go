package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/admission"
	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
)

// ScopeHeader names the scope of an MCP-over-HTTP request when the URL has
// no ?scope= parameter.
const ScopeHeader = "Codemode-Scope"

// sessionHeader is the streamable HTTP transport's session header.
const sessionHeader = "Mcp-Session-Id"

// DefaultSessionTimeout closes MCP sessions that sent no request for this
// long, when HandlerOptions leave SessionTimeout zero.
const DefaultSessionTimeout = 30 * time.Minute

// HandlerOptions configure Handler. The zero value works.
type HandlerOptions struct {
	// Logger receives the handler's log lines. Default: the App's logger.
	Logger *slog.Logger
	// Version is reported as serverInfo.version. Default "dev".
	Version string
	// ScopeAllowed, when set, says whether a request may use a scope (the
	// HTTP service passes its API-key check). A scope it refuses looks
	// exactly like one that does not exist.
	ScopeAllowed func(r *http.Request, scope string) bool
	// SessionTimeout closes idle MCP sessions. Default DefaultSessionTimeout;
	// negative: never.
	SessionTimeout time.Duration
	// Upstreams are awaited before a session's first tools/list (see
	// Options.Upstreams).
	Upstreams *Upstreams
	// StreamPollAfter, when positive, closes the SSE stream of a tools/call
	// still running after this long, with a retry field, for clients of
	// protocol 2025-11-25 (SEP-1699): they reconnect with Last-Event-ID and
	// get the rest, result included, from the event store. It keeps long
	// runs alive behind proxies that cut idle streams. Default 0: never.
	StreamPollAfter time.Duration
	// MaxSessions bounds the MCP sessions open at once, in all scopes,
	// shared among tenants (SetTenant): an initialize refused is answered
	// 503 with a JSON-RPC error and Retry-After. Default config.DefaultMaxMCPSessions;
	// negative: no bound.
	MaxSessions int
}

// HTTPHandler serves MCP over streamable HTTP (the service's /mcp), one
// Server per scope, created on first use.
//
// The scope of a new MCP session is the URL's ?scope= parameter, else the
// Codemode-Scope header, else "default"; an unknown or refused scope is a
// 404 {"error":{"code":"UNKNOWN_SCOPE",...}}. A session stays in its scope:
// its id (Mcp-Session-Id) records the scope, every later request of the
// session is checked against ScopeAllowed for it, and a request that names
// another scope, or an id that is not one of ours, is answered 404 as an
// unknown session.
type HTTPHandler struct {
	app  *app.App
	opts HandlerOptions
	log  *slog.Logger
	h    *sdk.StreamableHTTPHandler

	mu        sync.Mutex
	servers   map[string]*Server           // by scope; guarded by mu
	closed    bool                         // guarded by mu
	admission Admission                    // guarded by mu
	tenant    func(r *http.Request) string // guarded by mu
	sessions  *sessionCap
	tasks     taskStore // task-augmented calls (tasks.go)
}

// Admission ties a tool call to the admission of the HTTP request that
// carried it. It is called with that request's header as the call starts and
// returns what to call when the call ends (before its result is sent), or ok
// false when the call must not run: it was not admitted, or its request has
// ended before it started (the call is then answered as cancelled before it
// started, and not logged). A call's admission so lasts as long as the call,
// not its request: a client that leaves mid-call, whose call goes on for the
// event store to replay, still holds what it was admitted with.
type Admission = func(header http.Header) (done func(), ok bool)

// SetAdmission makes every tools/call over h claim its request's admission
// (the HTTP service passes its run slots and memory budget). Call it before
// h serves its first request.
func (h *HTTPHandler) SetAdmission(a Admission) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.admission = a
}

// SetTenant makes the MCP sessions of each tenant (the HTTP service passes
// its API key's name) share server.max_mcp_sessions fairly with the others
// (see admission.Pool); without it, all sessions are one tenant's. Call it
// before h serves its first request.
func (h *HTTPHandler) SetTenant(tenant func(r *http.Request) string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tenant = tenant
}

// Sessions is the pool of h's MCP sessions, for metrics.
func (h *HTTPHandler) Sessions() *admission.Pool { return h.sessions.pool }

// Handler returns the streamable-HTTP MCP handler over the app. Close it
// when the service stops.
func Handler(a *app.App, opts HandlerOptions) *HTTPHandler {
	log := opts.Logger
	if log == nil {
		log = a.Logger
	}
	if log == nil {
		log = slog.Default()
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = config.DefaultMaxMCPSessions
	}
	h := &HTTPHandler{app: a, opts: opts, log: log, servers: map[string]*Server{},
		sessions: newSessionCap(opts.MaxSessions)} // negative: no bound
	timeout := opts.SessionTimeout
	switch {
	case timeout == 0:
		timeout = DefaultSessionTimeout
	case timeout < 0:
		timeout = 0
	}
	h.h = sdk.NewStreamableHTTPHandler(h.serverFor, &sdk.StreamableHTTPOptions{
		Logger:         quiet(log),
		SessionTimeout: timeout,
		// An event store makes every SSE response start with a priming
		// event (an id, no data) so a client can resume a broken stream
		// with Last-Event-ID, and keeps what a session's standalone stream
		// could not deliver while no GET was open (a tool-list change
		// notifies idle sessions without a failed write per session).
		EventStore:          sdk.NewMemoryEventStore(nil),
		MaxRequestBodyBytes: maxBody,
	})
	return h
}

// maxBody bounds one MCP request body (the go-sdk's default).
const maxBody = sdk.DefaultMaxRequestBodyBytes

// sdkServerMethods are the methods the go-sdk server handles (its
// serverMethodInfos); a request for another method is answered here with
// JSON-RPC's -32601, where the go-sdk would answer HTTP 400 in plain text.
// TestHTTPKnownMethods keeps this list in step with the go-sdk.
var sdkServerMethods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
	"prompts/list": true, "prompts/get": true, "resources/list": true, "resources/templates/list": true,
	"resources/read": true, "resources/subscribe": true, "resources/unsubscribe": true,
	"logging/setLevel": true, "completion/complete": true, "server/discover": true, "subscriptions/listen": true,
	"notifications/cancelled": true, "notifications/initialized": true, "notifications/roots/list_changed": true,
	"notifications/progress": true,
}

var _ http.Handler = (*HTTPHandler)(nil)

type scopeKey struct{}

// RequestScope is the scope a request names: the ?scope= parameter, else
// the Codemode-Scope header, else "default".
func RequestScope(r *http.Request) string {
	if s := r.URL.Query().Get("scope"); s != "" {
		return s
	}
	if s := r.Header.Get(ScopeHeader); s != "" {
		return s
	}
	return config.DefaultScope
}

// ServeHTTP routes a request to its scope's server.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(tenantHeader) // only h says whose a request is
	h.mu.Lock()
	tenant := h.tenant
	h.mu.Unlock()
	if tenant != nil {
		r.Header.Set(tenantHeader, tenant(r))
	}
	scope := RequestScope(r)
	if id := r.Header.Get(sessionHeader); id != "" {
		sessScope, ok := sessionScope(id)
		named := r.URL.Query().Get("scope") != "" || r.Header.Get(ScopeHeader) != ""
		if !ok || (named && sessScope != scope) || !h.allowed(r, sessScope) {
			writeError(w, http.StatusNotFound, "UNKNOWN_SESSION", fmt.Sprintf("unknown MCP session %q", id))
			return
		}
		scope = sessScope
	} else if !h.allowed(r, scope) {
		writeError(w, http.StatusNotFound, "UNKNOWN_SCOPE", fmt.Sprintf("unknown scope %q", scope))
		return
	}
	if r.Method == http.MethodPost {
		goOn, method := h.precheck(w, r, scope)
		if !goOn {
			return
		}
		if method == "initialize" || method == "tools/list" {
			// The go-sdk does not know tasks: its answer gets them (tasks.go).
			rw := &taskAnnouncer{header: http.Header{}}
			h.h.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), scopeKey{}, scope)))
			rw.flushTo(w)
			return
		}
	}
	h.h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, scope)))
}

// precheck answers, as the specification says, the POSTs the go-sdk would
// answer otherwise: a request without a session id that is not an
// initialize (HTTP 400 with a JSON-RPC error), a request for a method no
// server has (JSON-RPC -32601; an unknown notification is accepted and
// ignored), and the requests of tasks, which the go-sdk does not know
// (tasks.go). It reports whether the request goes on to the go-sdk, with its
// body restored, and the method of a request alone in its body.
func (h *HTTPHandler) precheck(w http.ResponseWriter, r *http.Request, scope string) (bool, string) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || len(body) > maxBody {
		return true, "" // the go-sdk reports it (413, or the read error)
	}
	msgs, ok := decodeBody(body)
	if !ok {
		return true, "" // malformed: the go-sdk's parse error
	}
	if r.Header.Get(sessionHeader) == "" && r.Header.Get("Mcp-Protocol-Version") < "2026-07-28" {
		initialize := false
		var id jsonrpc.ID
		for _, m := range msgs {
			if req, ok := m.(*jsonrpc.Request); ok {
				if req.Method == "initialize" {
					initialize = true
				}
				if req.IsCall() && !id.IsValid() {
					id = req.ID
				}
			}
		}
		if !initialize {
			writeRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "Bad Request: no Mcp-Session-Id header; start a session with initialize")
			return false, ""
		}
		if !h.sessions.admissible(r.Header.Get(tenantHeader)) {
			w.Header().Set("Retry-After", sessionRetryAfter)
			e := tooManySessions(nil)
			writeRPCError(w, http.StatusServiceUnavailable, id, e.Code, e.Message)
			return false, ""
		}
	}
	if len(msgs) != 1 {
		return true, ""
	}
	req, ok := msgs[0].(*jsonrpc.Request)
	if !ok {
		return true, ""
	}
	if req.IsCall() && r.Header.Get(sessionHeader) != "" && wantsTask(req) {
		h.serveTask(w, r, req, scope)
		return false, req.Method
	}
	if sdkServerMethods[req.Method] {
		return true, req.Method
	}
	if !req.IsCall() {
		w.WriteHeader(http.StatusAccepted)
		return false, ""
	}
	writeRPCError(w, http.StatusOK, req.ID, jsonrpc.CodeMethodNotFound, fmt.Sprintf("method not found: %q", req.Method))
	return false, ""
}

// decodeBody decodes a POST body: one JSON-RPC message or a batch.
func decodeBody(body []byte) ([]jsonrpc.Message, bool) {
	msgs, err := decodeLine(body)
	return msgs, err == nil
}

// writeRPCError answers with a JSON-RPC error response.
func writeRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, message string) {
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: message}})
	if err != nil {
		http.Error(w, message, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

func (h *HTTPHandler) allowed(r *http.Request, scope string) bool {
	if scope == "" || !h.app.Registry.HasScope(scope) { // "" is the global layer, not a scope
		return false
	}
	return h.opts.ScopeAllowed == nil || h.opts.ScopeAllowed(r, scope)
}

// serverFor is the go-sdk handler's getServer: the server of the scope
// ServeHTTP resolved (nil, a 400, when it cannot be had).
func (h *HTTPHandler) serverFor(r *http.Request) *sdk.Server {
	scope, _ := r.Context().Value(scopeKey{}).(string)
	s, err := h.server(scope)
	if err != nil {
		h.log.Warn("no MCP server for the request", "scope", scope, "error", err)
		return nil
	}
	return s.MCP()
}

func (h *HTTPHandler) server(scope string) (*Server, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("the MCP handler is closed")
	}
	if s, ok := h.servers[scope]; ok {
		return s, nil
	}
	s, err := NewServer(h.app, scope, Options{
		Logger:    h.log,
		Version:   h.opts.Version,
		Upstreams: h.opts.Upstreams,
		sessionID: func() string { return newSessionID(scope) },
		pollAfter: h.opts.StreamPollAfter,
		admission: h.admission,
		sessions:  h.sessions,
	})
	if err != nil {
		return nil, err
	}
	h.servers[scope] = s
	return s, nil
}

// Close stops the per-scope servers from following the registry. Sessions
// already open are closed by the HTTP server's shutdown.
func (h *HTTPHandler) Close() error {
	h.mu.Lock()
	servers := h.servers
	h.servers, h.closed = map[string]*Server{}, true
	h.mu.Unlock()
	for _, s := range servers {
		s.Close()
	}
	return nil
}

// newSessionID mints an MCP session id that records its scope:
// "<random>.<base64url(scope)>".
func newSessionID(scope string) string {
	return rand.Text() + "." + base64.RawURLEncoding.EncodeToString([]byte(scope))
}

// sessionScope reads the scope back from a session id minted by
// newSessionID.
func sessionScope(id string) (string, bool) {
	random, enc, ok := strings.Cut(id, ".")
	if !ok || random == "" || enc == "" {
		return "", false
	}
	scope, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(scope) == 0 {
		return "", false
	}
	return string(scope), true
}

// writeError writes the service's error shape.
func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": message}})
}
