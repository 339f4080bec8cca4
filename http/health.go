package httpapi

import (
	"context"
	"errors"
	"github.com/codemode/codemode/httpsource"
	"net/http"
	"time"

	"github.com/codemode/codemode/mcp"
	"github.com/codemode/codemode/session"
)

// readyStoreTimeout bounds the store probe of GET /readyz.
const readyStoreTimeout = 2 * time.Second

// readyProbeID is the session GET /readyz reads to reach the store; no
// session has it (ids are hex), so the answer is ErrNotFound.
const readyProbeID = "readyz-probe"

// Check is one readiness check of GET /readyz.
type Check struct {
	OK bool `json:"ok"`
	// Detail says why the check failed, or what it saw.
	Detail string `json:"detail,omitempty"`
}

// healthz serves GET /healthz, liveness: 200 {"status":"ok"} while the
// process serves requests at all, whatever its dependencies.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz serves GET /readyz, readiness: 200 {"status":"ready","checks":{…}}
// when every check passes, else 503 {"status":"not_ready","checks":{…}}.
// The checks: "server" (not shutting down), "store" (a read answers within
// readyStoreTimeout, and the latest write did not fail for the store, see
// session.WriteHealth), and "upstream:NAME" for each upstream MCP server (its
// state is ready). The process-isolation workers start on the first run, so
// they are no check.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	checks := map[string]Check{"server": {OK: true}}
	if s.isStopping() {
		checks["server"] = Check{Detail: "shutting down"}
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyStoreTimeout)
	defer cancel()
	switch _, err := s.app.Store.GetSession(ctx, readyProbeID); {
	case err == nil || errors.Is(err, session.ErrNotFound):
		checks["store"] = Check{OK: true}
	case ctx.Err() != nil:
		checks["store"] = Check{Detail: "the store did not answer within " + readyStoreTimeout.String()}
	default:
		checks["store"] = Check{Detail: err.Error()}
	}
	if h, ok := s.app.Store.(session.WriteHealth); ok && checks["store"].OK {
		if err := h.WriteErr(); err != nil {
			checks["store"] = Check{Detail: "writes fail: " + err.Error()}
		}
	}
	if s.upstreams != nil {
		for _, st := range s.upstreams.States() {
			c := Check{OK: st.State == mcp.StateReady, Detail: st.State}
			if st.LastError != "" {
				c.Detail += ": " + st.LastError
			}
			checks["upstream:"+st.Name] = c
		}
	}
	if s.sources != nil {
		for _, st := range s.sources.States() {
			c := Check{OK: st.State == httpsource.StateReady, Detail: st.State}
			if !c.OK && st.LastError != "" {
				c.Detail += ": " + st.LastError
			}
			checks["openapi:"+st.Name] = c
		}
	}
	status, code := "ready", http.StatusOK
	for _, c := range checks {
		if !c.OK {
			status, code = "not_ready", http.StatusServiceUnavailable
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, code, struct {
		Status string           `json:"status"`
		Checks map[string]Check `json:"checks"`
	}{status, checks})
}
