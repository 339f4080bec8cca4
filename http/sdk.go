package httpapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/sdkgen"
)

// resolveScope returns the view of a scope the request may use ("" means
// default). A scope the key may not use is a 404 exactly like one that does
// not exist, so scopes cannot be enumerated.
func (s *Server) resolveScope(r *http.Request, scope string) (*registry.View, *apiError) {
	if scope == "" {
		scope = config.DefaultScope
	}
	if !ScopeAllowed(r.Context(), scope) || !s.app.Registry.HasScope(scope) {
		return nil, unknownScope(scope)
	}
	v, err := s.app.Registry.View(scope)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, unknownScope(scope) // removed since HasScope
	}
	if err != nil {
		return nil, s.internal(r, "resolve scope", err)
	}
	return v, nil
}

// tools serves GET /v1/tools?scope=S: what that scope's model is offered.
func (s *Server) tools(w http.ResponseWriter, r *http.Request) {
	v, apiErr := s.resolveScope(r, r.URL.Query().Get("scope"))
	if apiErr != nil {
		s.writeError(w, apiErr)
		return
	}
	schemas := v.Schemas()
	for i := range schemas {
		if schemas[i].Name == registry.RunCode {
			schemas[i].Description = string(s.app.Bridge.Prompt(v)) // what its model reads
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Scope string                 `json:"scope"`
		Mode  registry.Mode          `json:"mode"`
		Tools []registry.ModelSchema `json:"tools"`
	}{v.Scope(), v.Mode(), schemas})
}

// sdkFormat is one rendering of a scope's SDK.
type sdkFormat struct {
	contentType string
	render      func(*bridge.Bridge, *registry.View) []byte
}

var sdkFormats = map[string]sdkFormat{
	"ts":     {"application/typescript; charset=utf-8", func(_ *bridge.Bridge, v *registry.View) []byte { return sdkgen.TypeScript(bridge.SDK(v)) }},
	"js":     {"text/javascript; charset=utf-8", func(_ *bridge.Bridge, v *registry.View) []byte { return sdkgen.JavaScript(bridge.SDK(v)) }},
	"prompt": {"text/markdown; charset=utf-8", (*bridge.Bridge).Prompt},
}

// sdkTextKey memoizes a rendering on its view, which lives exactly as long
// as the tool set it was rendered from.
type sdkTextKey struct{ format string }

// sdk serves GET /v1/sdk?scope=S&format=ts|js|prompt: the generated text
// with an ETag made of the tool set's version and the format, so it changes
// exactly when the scope's tool set (or the generator) changes. A matching
// If-None-Match gets a 304.
func (s *Server) sdk(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("format")
	if name == "" {
		name = "ts"
	}
	format, ok := sdkFormats[name]
	if !ok {
		s.writeError(w, badRequest("format: want ts, js or prompt, got %q", name))
		return
	}
	v, apiErr := s.resolveScope(r, q.Get("scope"))
	if apiErr != nil {
		s.writeError(w, apiErr)
		return
	}
	set := bridge.SDK(v)
	etag := `"` + set.Version() + "-" + name + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	text := v.Memo(sdkTextKey{name}, func() any { return format.render(s.app.Bridge, v) }).([]byte)
	h.Set("Content-Type", format.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(text)
}

// etagMatches reports whether an If-None-Match header matches etag, by weak
// comparison (RFC 9110 §13.1.2): "*" matches anything, W/ prefixes are
// ignored.
func etagMatches(header, etag string) bool {
	for _, candidate := range strings.Split(header, ",") {
		candidate = strings.TrimSpace(candidate)
		if candidate == "*" || strings.TrimPrefix(candidate, "W/") == etag {
			return true
		}
	}
	return false
}
