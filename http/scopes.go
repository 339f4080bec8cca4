package httpapi

import (
	"errors"
	"net/http"

	"github.com/codemode/codemode/registry"
)

// scopeJSON is one entry of GET /v1/scopes.
type scopeJSON struct {
	Name   string        `json:"name"`
	Parent string        `json:"parent,omitempty"` // absent for a root scope
	Mode   registry.Mode `json:"mode"`
}

// scopes serves GET /v1/scopes: {"scopes":[{"name","parent"?,"mode"}]}, the
// scopes the request may use, by name. A key sees only the scopes it lists,
// so the answer never reveals a scope the key could not use anyway.
func (s *Server) scopes(w http.ResponseWriter, r *http.Request) error {
	out := []scopeJSON{}
	for _, name := range s.app.Registry.Scopes() {
		if !ScopeAllowed(r.Context(), name) {
			continue
		}
		v, err := s.app.Registry.View(name)
		if errors.Is(err, registry.ErrNotFound) {
			continue // removed since Scopes
		}
		if err != nil {
			return s.internal(r, "resolve scope", err)
		}
		sc := scopeJSON{Name: name, Mode: v.Mode()}
		if chain := s.app.Registry.Ancestry(name); len(chain) > 1 {
			sc.Parent = chain[1]
		}
		out = append(out, sc)
	}
	writeJSON(w, http.StatusOK, struct {
		Scopes []scopeJSON `json:"scopes"`
	}{out})
	return nil
}
