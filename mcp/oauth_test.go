package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/config"
)

// oauthServer is an MCP server that wants a bearer token from its own
// authorization server (the client credentials grant), with the metadata a
// client discovers it through: a 401 naming the protected resource
// metadata, which names the authorization server, whose metadata names the
// token endpoint.
type oauthServer struct {
	*httptest.Server
	tokens   atomic.Int32 // tokens issued
	refusals atomic.Int32 // requests answered 401
}

func newOAuthServer(t *testing.T) *oauthServer {
	t.Helper()
	o := &oauthServer{}
	mcpSrv := sdk.NewServer(&sdk.Implementation{Name: "guarded", Version: "1"}, &sdk.ServerOptions{Logger: discard})
	sdk.AddTool(mcpSrv, &sdk.Tool{Name: "add", Description: "Adds."}, func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
		return nil, addOut{Sum: in.A + in.B}, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcpSrv }, &sdk.StreamableHTTPOptions{Logger: discard})
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer issued-") {
			o.refusals.Add(1)
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp", scope="notes"`, o.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": o.URL + "/mcp", "authorization_servers": []string{o.URL}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": o.URL, "token_endpoint": o.URL + "/token", "authorization_endpoint": o.URL + "/authorize",
			"response_types_supported": []string{"code"}, "grant_types_supported": []string{"client_credentials"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
		}
		if r.PostFormValue("grant_type") != "client_credentials" || id != "codemode" || secret != "s3cret" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		n := o.tokens.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("issued-%d", n), "token_type": "Bearer", "expires_in": 3600})
	})
	o.Server = httptest.NewServer(mux)
	t.Cleanup(o.Close)
	return o
}

func TestHTTPUpstreamOAuthClientCredentials(t *testing.T) {
	t.Setenv("CODEMODE_TEST_SECRET", "s3cret")
	for _, tt := range []struct {
		name     string
		tokenURL bool
	}{{"discovered from the 401", false}, {"token_url configured", true}} {
		t.Run(tt.name, func(t *testing.T) {
			o := newOAuthServer(t)
			auth := &config.MCPAuth{ClientID: "codemode", ClientSecret: "${CODEMODE_TEST_SECRET}", Scopes: []string{"notes"}}
			if tt.tokenURL {
				auth.TokenURL = o.URL + "/token"
			}
			a := newApp(t)
			startReady(t, a, discard, config.MCPServer{Name: "guarded", URL: o.URL + "/mcp", Scope: "default", Transport: config.TransportStreamable, Auth: auth})
			if got := run(t, a, `return (await tools["guarded.add"]({a: 20, b: 22})).sum`); string(got) != "42" {
				t.Fatalf("value %s", got)
			}
			if n := o.tokens.Load(); n != 1 {
				t.Errorf("%d tokens issued, want 1 (reused across requests)", n)
			}
			if tt.tokenURL && o.refusals.Load() != 0 {
				t.Errorf("with token_url the first request should already carry a token (%d refusals)", o.refusals.Load())
			}
		})
	}
	t.Run("wrong credentials are unauthorized, not retried", func(t *testing.T) {
		o := newOAuthServer(t)
		a := newApp(t)
		ups := startSettled(t, a, []config.MCPServer{{Name: "guarded", URL: o.URL + "/mcp", Scope: "default",
			Transport: config.TransportStreamable, Auth: &config.MCPAuth{ClientID: "codemode", ClientSecret: "wrong"}}}, testOptions(discard))
		if st := ups.States()[0]; st.State != StateUnauthorized || st.Attempts != 1 {
			t.Errorf("state %+v", st)
		}
	})
}
