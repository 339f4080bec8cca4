package httpapi

import (
	"net/http"

	"github.com/codemode/codemode/mcp"
)

// Upstreams reports the upstream MCP servers; *mcp.Upstreams implements it.
type Upstreams interface {
	States() []mcp.UpstreamState
}

// upstreams serves GET /v1/upstreams: {"upstreams":[...]}, each upstream MCP
// server with its state (connecting, ready, restarting, failed,
// unauthorized, stopped), last error, tool count, restarts, renamed and
// rejected tools, in configuration order. A key sees only the upstreams of
// scopes it may use.
func upstreams(src Upstreams) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out := []mcp.UpstreamState{}
		if src != nil {
			for _, st := range src.States() {
				if ScopeAllowed(r.Context(), st.Scope) {
					out = append(out, st)
				}
			}
		}
		writeJSON(w, http.StatusOK, struct {
			Upstreams []mcp.UpstreamState `json:"upstreams"`
		}{out})
	}
}
