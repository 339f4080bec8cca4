package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/catalog"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/sdkgen"
	"github.com/codemode/codemode/sdkgen/tokens"
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
func (s *Server) tools(w http.ResponseWriter, r *http.Request) error {
	v, apiErr := s.resolveScope(r, r.URL.Query().Get("scope"))
	if apiErr != nil {
		return apiErr
	}
	schemas := s.app.Bridge.ModelSchemas(v) // run_code's description is what its model reads
	writeJSON(w, http.StatusOK, struct {
		Scope string                 `json:"scope"`
		Mode  registry.Mode          `json:"mode"`
		Tools []registry.ModelSchema `json:"tools"`
		// Withheld are the tools the scope's guards always veto, left out
		// of the tools and the SDK, with the reason.
		Withheld []registry.Withheld `json:"withheld,omitempty"`
	}{v.Scope(), v.Mode(), schemas, v.Withheld()})
	return nil
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
func (s *Server) sdk(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	name := q.Get("format")
	if name == "" {
		name = "ts"
	}
	format, ok := sdkFormats[name]
	if !ok {
		return badRequest("format: want ts, js or prompt, got %q", name)
	}
	v, apiErr := s.resolveScope(r, q.Get("scope"))
	if apiErr != nil {
		return apiErr
	}
	if notModified(w, r, `"`+bridge.SDK(v).Version()+"-"+name+`"`) {
		return nil
	}
	writeText(w, format.contentType, v.Memo(sdkTextKey{name}, func() any { return format.render(s.app.Bridge, v) }).([]byte))
	return nil
}

// sdkTokens is the body of GET /v1/sdk/tokens.
type sdkTokens struct {
	Scope    string `json:"scope"`
	Version  string `json:"version"`  // the tool set's version, as in the SDK's ETag
	Encoding string `json:"encoding"` // the tokenizer: o200k_base
	// TS and Prompt count the declarations and the prompt; Native counts
	// each tool's name, description and parameters as compact JSON, what a
	// model is offered without Code Mode.
	TS     tokens.Split `json:"ts"`
	Prompt tokens.Split `json:"prompt"`
	Native tokens.Split `json:"native"`
}

// sdkTokensKey memoizes the counts on the view: once per tool set version,
// which is what the SDK's ETag names.
type sdkTokensKey struct{}

// sdkTokenCounts serves GET /v1/sdk/tokens?scope=S: the token counts of the
// scope's SDK texts, in total and per tool, with a real tokenizer. Counting
// is slow next to serving the text, so it is done once per tool set
// version; the ETag is the version's, and a matching If-None-Match gets a
// 304.
func (s *Server) sdkTokenCounts(w http.ResponseWriter, r *http.Request) error {
	v, apiErr := s.resolveScope(r, r.URL.Query().Get("scope"))
	if apiErr != nil {
		return apiErr
	}
	version := bridge.SDK(v).Version()
	if notModified(w, r, `"`+version+`-tokens"`) {
		return nil
	}
	counts := v.Memo(sdkTokensKey{}, func() any {
		text := func(name string) string {
			return string(v.Memo(sdkTextKey{name}, func() any { return sdkFormats[name].render(s.app.Bridge, v) }).([]byte))
		}
		native := tokens.Split{Tools: map[string]int{}}
		for _, t := range s.app.Bridge.ModelSchemas(v) {
			b, err := json.Marshal(struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			}{t.Name, t.Description, t.Parameters})
			if err != nil {
				continue // a schema that does not marshal is not offered either
			}
			n := tokens.Count(string(b))
			native.Tools[t.Name] = n
			native.Total += n
		}
		return sdkTokens{
			Scope:    v.Scope(),
			Version:  version,
			Encoding: tokens.Encoding,
			TS:       tokens.PerTool(text("ts")),
			Prompt:   tokens.PerTool(text("prompt")),
			Native:   native,
		}
	}).(sdkTokens)
	writeJSON(w, http.StatusOK, counts)
	return nil
}

// searchTools serves GET /v1/tools/search?scope=S&q=TEXT&limit=N&group=G: the scope's tools
// ranked for the query, as tools.$search answers a program (catalog.Result). A bad limit or
// an unknown group is a 400.
func (s *Server) searchTools(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	v, apiErr := s.resolveScope(r, q.Get("scope"))
	if apiErr != nil {
		return apiErr
	}
	query := catalog.Query{Text: q.Get("q"), Group: q.Get("group")}
	if raw := q.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return badRequest("limit must be a whole number from 1 to %d", catalog.MaxLimit)
		}
		query.Limit = n // Search lowers it to catalog.MaxLimit
	}
	res, err := bridge.Catalog(v).Search(query)
	if err != nil {
		return badRequest("%s", err.Error())
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
