package httpapi

import (
	"net/http"
	"reflect"
	"testing"
)

type scopesBody struct {
	Scopes []scopeJSON `json:"scopes"`
}

func TestScopes(t *testing.T) {
	open := newTestServer(t, scopesYAML)
	keyed := newTestServer(t, keysYAML)
	all := []scopeJSON{
		{Name: "agent", Parent: "default", Mode: "code"},
		{Name: "default", Mode: "both"},
		{Name: "other", Mode: "native"},
		{Name: "readonly", Parent: "default", Mode: "both"},
	}
	tests := []struct {
		name string
		ts   *testServer
		key  string
		want []scopeJSON
	}{
		{"open server: every scope, by name", open, "", all},
		{"key A sees only default", keyed, keyA, []scopeJSON{{Name: "default", Mode: "both"}}},
		{"key B sees only readonly", keyed, keyB, []scopeJSON{{Name: "readonly", Parent: "default", Mode: "both"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := tt.ts.do(request{method: http.MethodGet, path: "/v1/scopes", key: tt.key})
			got := decode[scopesBody](t, resp, b, http.StatusOK)
			if !reflect.DeepEqual(got.Scopes, tt.want) {
				t.Fatalf("scopes %+v, want %+v", got.Scopes, tt.want)
			}
		})
	}
	t.Run("keyed server without a key is a 401", func(t *testing.T) {
		resp, b := keyed.get("/v1/scopes")
		wantError(t, resp, b, http.StatusUnauthorized, CodeUnauthorized)
	})
}
