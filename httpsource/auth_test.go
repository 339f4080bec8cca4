package httpsource_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/internal/testkit"
)

// TestOAuthClientCredentialsFromTheDocument: with client_id and no
// token_url, the token endpoint is the document's clientCredentials flow;
// the token is fetched once, sent as a bearer, and redacted when the API
// echoes it.
func TestOAuthClientCredentialsFromTheDocument(t *testing.T) {
	var tokens atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, _ := r.BasicAuth()
		if id != "codemode" || secret != "client-secret-xyz" || r.Form.Get("grant_type") != "client_credentials" || r.Form.Get("scope") != "read" {
			http.Error(w, "bad client", http.StatusUnauthorized)
			return
		}
		tokens.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "at-issued-token-001", "token_type": "Bearer", "expires_in": 3600})
	})
	mux.HandleFunc("GET /me", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer at-issued-token-001" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"login": "octocat"}`)
	})
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "you sent "+r.Header.Get("Authorization"), http.StatusForbidden)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	doc := testkit.WriteFile(t, "oauth.json", `{"openapi": "3.0.3", "servers": [{"url": "`+srv.URL+`"}],
		"components": {"securitySchemes": {"oauth": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "`+srv.URL+`/oauth/token", "scopes": {"read": "read"}}}}}},
		"paths": {"/me": {"get": {"operationId": "me", "responses": {"200": {"description": "ok"}}}},
		          "/echo": {"get": {"operationId": "echo", "responses": {"200": {"description": "ok"}}}}}}`)
	t.Setenv("CLIENT_SECRET", "client-secret-xyz")
	a, _ := setup(t, fmt.Sprintf("openapi_sources:\n  - {name: api, file: %q, auth: {client_id: codemode, client_secret: '${CLIENT_SECRET}', scopes: [read]}}\n", doc), app.Options{})
	res := run(t, a, `
		const a = await tools["api.me"]({}), b = await tools["api.me"]({});
		let echoed; try { await tools["api.echo"]({}) } catch (e) { echoed = e.message }
		return [a.login, b.login, echoed]`)
	got := result(t, res).([]any)
	if got[0] != "octocat" || got[1] != "octocat" || !strings.Contains(got[2].(string), "you sent Bearer [redacted]") {
		t.Fatalf("result %v", got)
	}
	if tokens.Load() != 1 {
		t.Errorf("%d tokens fetched, want 1 (reused)", tokens.Load())
	}
	if log := sessionLog(t, a, res); strings.Contains(log, "at-issued-token-001") || strings.Contains(log, "client-secret-xyz") {
		t.Error("the log holds a credential")
	}
}

// TestAPIKeyInQuery: the document's apiKey scheme places the key in the
// query; it reaches the API and no error text.
func TestAPIKeyInQuery(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("api_key") != "q-key/with+chars" {
			http.Error(w, "no key in "+r.URL.RawQuery, http.StatusUnauthorized)
			return
		}
		http.Error(w, "request "+r.URL.RawQuery+" refused", http.StatusTeapot)
	}))
	defer srv.Close()
	doc := testkit.WriteFile(t, "key.json", `{"openapi": "3.1.0",
		"components": {"securitySchemes": {"k": {"type": "apiKey", "in": "query", "name": "api_key"}}},
		"paths": {"/items": {"get": {"operationId": "items", "parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}], "responses": {"200": {"description": "ok"}}}}}}`)
	t.Setenv("Q_KEY", "q-key/with+chars")
	a, _ := setup(t, fmt.Sprintf("openapi_sources:\n  - {name: api, file: %q, base_url: %q, auth: {api_key: '${Q_KEY}'}}\n", doc, srv.URL), app.Options{})
	res := run(t, a, `try { await tools["api.items"]({q: "x"}) } catch (e) { return e.message }`)
	msg, _ := result(t, res).(string)
	if !strings.Contains(msg, "418 I'm a teapot") || !strings.Contains(msg, "api_key=[redacted]") || strings.Contains(msg, "q-key") {
		t.Fatalf("message %q", msg)
	}
}

// TestAPIKeyPlacedByAFetchedDocument: a URL document on the API's origin is
// fetched with the key (in a header, before the document is read), and the
// calls then place it where the document's scheme says (the query).
func TestAPIKeyPlacedByAFetchedDocument(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/openapi.json":
			fmt.Fprint(w, `{"openapi": "3.1.0", "servers": [{"url": "`+srv.URL+`"}],
				"components": {"securitySchemes": {"k": {"type": "apiKey", "in": "query", "name": "api_key"}}},
				"paths": {"/items": {"get": {"operationId": "items", "responses": {"200": {"description": "ok"}}}}}}`)
		case "/items":
			if r.URL.Query().Get("api_key") != "doc-placed-key" {
				http.Error(w, "the key is not in the query", http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `["a"]`)
		}
	}))
	defer srv.Close()
	t.Setenv("DOC_KEY", "doc-placed-key")
	a, _ := setup(t, fmt.Sprintf("openapi_sources:\n  - {name: api, url: %q, base_url: %q, auth: {api_key: '${DOC_KEY}'}}\n", srv.URL+"/openapi.json", srv.URL), app.Options{})
	if got := result(t, run(t, a, `return await tools["api.items"]({})`)); fmt.Sprint(got) != "[a]" {
		t.Fatalf("result %v", got)
	}
}
