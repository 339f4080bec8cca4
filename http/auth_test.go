package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/codemode/codemode/config"
)

const (
	keyA = "secret-key-a" // scopes: default
	keyB = "secret-key-b" // scopes: readonly
)

func digest(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

var keysYAML = approvalYAML + fmt.Sprintf(`
api_keys:
  - {sha256: %s, scopes: [default]}
  - {sha256: %s, scopes: [readonly]}
`, digest(keyA), strings.ToUpper(digest(keyB)))

func TestAuthentication(t *testing.T) {
	ts := newTestServer(t, keysYAML)
	tests := []struct {
		name, header, scope string
		status              int
	}{
		{"no key", "", "default", 401},
		{"wrong key", "Bearer not-a-key", "default", 401},
		{"empty bearer", "Bearer ", "default", 401},
		{"basic scheme", "Basic " + keyA, "default", 401},
		{"key A", "Bearer " + keyA, "default", 200},
		{"scheme is case-insensitive", "bearer " + keyA, "default", 200},
		{"key B (digest configured in upper case)", "Bearer " + keyB, "readonly", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.header != "" {
				h["Authorization"] = tt.header
			}
			resp, b := ts.do(request{method: http.MethodGet, path: "/v1/tools?scope=" + tt.scope, header: h})
			if tt.status == 401 {
				wantError(t, resp, b, http.StatusUnauthorized, CodeUnauthorized)
				if resp.Header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
				return
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
		})
	}
	// Every /v1 route needs a key; health, metrics and the page do not.
	for _, r := range []request{
		{method: http.MethodPost, path: "/v1/run", body: `{"code": "return 1"}`},
		{method: http.MethodPost, path: "/v1/sessions"},
		{method: http.MethodGet, path: "/v1/sdk"},
		{method: http.MethodGet, path: "/v1/sessions/x/events", header: map[string]string{"Accept": "text/event-stream"}},
		{method: http.MethodPost, path: "/v1/sessions/x/approvals/y", body: `{"decision": "allow"}`},
		{method: http.MethodGet, path: "/v1/sessions"},
		{method: http.MethodDelete, path: "/v1/sessions/x"},
		{method: http.MethodGet, path: "/metrics"},
		{method: http.MethodGet, path: "/metrics", key: "not-a-key"},
	} {
		resp, b := ts.do(r)
		wantError(t, resp, b, http.StatusUnauthorized, CodeUnauthorized)
	}
	// Health, readiness and the page do not; metrics take any key.
	for _, p := range []string{"/healthz", "/readyz", "/"} {
		if resp, _ := ts.get(p); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s without a key: %d", p, resp.StatusCode)
		}
	}
	for _, key := range []string{keyA, keyB} {
		if resp, _ := ts.do(request{method: http.MethodGet, path: "/metrics", key: key}); resp.StatusCode != http.StatusOK {
			t.Errorf("GET /metrics with a key: %d", resp.StatusCode)
		}
	}
}

// TestMetricsOpenWithoutKeys: a server without keys serves /metrics to anyone.
func TestMetricsOpenWithoutKeys(t *testing.T) {
	ts := newTestServer(t, "")
	if resp, b := ts.get("/metrics"); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, b)
	}
}

// TestKeysAndScopes: a key cannot see or use a scope it was not given, nor
// a session in one, and what it gets is exactly what a scope or session
// that does not exist gives.
func TestKeysAndScopes(t *testing.T) {
	ts := newTestServer(t, keysYAML)
	as := func(key string, r request) (*http.Response, []byte) {
		t.Helper()
		r.key = key
		return ts.do(r)
	}
	sameAsMissing := func(what string, resp *http.Response, b []byte, missingResp *http.Response, missingBody []byte, name, missingName string) {
		t.Helper()
		if resp.StatusCode != http.StatusNotFound || missingResp.StatusCode != http.StatusNotFound {
			t.Fatalf("%s: %d %s / missing: %d %s", what, resp.StatusCode, b, missingResp.StatusCode, missingBody)
		}
		// Each names its own request id.
		got := strings.ReplaceAll(strings.ReplaceAll(string(b), name, "X"), resp.Header.Get("X-Request-Id"), "ID")
		missing := strings.ReplaceAll(strings.ReplaceAll(string(missingBody), missingName, "X"), missingResp.Header.Get("X-Request-Id"), "ID")
		if got != missing {
			t.Errorf("%s: forbidden and missing differ:\n%s\n%s", what, b, missingBody)
		}
	}

	// Scopes.
	for _, path := range []string{"/v1/tools?scope=", "/v1/sdk?scope="} {
		resp, b := as(keyA, request{method: http.MethodGet, path: path + "readonly"})
		mresp, mb := as(keyA, request{method: http.MethodGet, path: path + "nosuch"})
		sameAsMissing(path, resp, b, mresp, mb, "readonly", "nosuch")
		if resp, _ := as(keyB, request{method: http.MethodGet, path: path + "readonly"}); resp.StatusCode != http.StatusOK {
			t.Errorf("key B on its own scope: %d", resp.StatusCode)
		}
	}
	// Key B's default is not its scope either.
	resp, b := as(keyB, request{method: http.MethodGet, path: "/v1/tools"})
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownScope)
	resp, b = as(keyA, request{method: http.MethodPost, path: "/v1/run", body: `{"code": "return 1", "scope": "readonly"}`})
	mresp, mb := as(keyA, request{method: http.MethodPost, path: "/v1/run", body: `{"code": "return 1", "scope": "nosuch"}`})
	sameAsMissing("run", resp, b, mresp, mb, "readonly", "nosuch")
	resp, b = as(keyA, request{method: http.MethodPost, path: "/v1/sessions", body: `{"scope": "readonly"}`})
	mresp, mb = as(keyA, request{method: http.MethodPost, path: "/v1/sessions", body: `{"scope": "nosuch"}`})
	sameAsMissing("create session", resp, b, mresp, mb, "readonly", "nosuch")

	// Sessions: key B's session is invisible to key A.
	idB := ts.newSession("readonly", keyB)
	idA := ts.newSession("", keyA)
	for _, r := range []request{
		{method: http.MethodGet, path: "/v1/sessions/%s"},
		{method: http.MethodGet, path: "/v1/sessions/%s/events"},
		{method: http.MethodGet, path: "/v1/sessions/%s/events", header: map[string]string{"Accept": "text/event-stream"}},
		{method: http.MethodGet, path: "/v1/sessions/%s/messages"},
		{method: http.MethodGet, path: "/v1/sessions/%s/approvals"},
		{method: http.MethodPost, path: "/v1/sessions/%s/approvals/a1", body: `{"decision": "allow"}`},
		{method: http.MethodPost, path: "/v1/sessions/%s/steps", body: `{"tool_calls": [{"id": "c1", "name": "math_add", "arguments": "{\"a\":1,\"b\":1}"}]}`},
		{method: http.MethodGet, path: "/v1/sessions/%s/calls/c9"},
		{method: http.MethodDelete, path: "/v1/sessions/%s"},
	} {
		forbidden, missing := r, r
		forbidden.path = fmt.Sprintf(r.path, idB)
		missing.path = fmt.Sprintf(r.path, "nosuch")
		resp, b := as(keyA, forbidden)
		mresp, mb := as(keyA, missing)
		sameAsMissing(r.method+" "+r.path, resp, b, mresp, mb, idB, "nosuch")
		// The owner can.
		own := r
		own.path = fmt.Sprintf(r.path, idB)
		switch {
		case strings.Contains(r.path, "/calls/"):
			// The owner's session is found: what is missing is the call.
			resp, b := as(keyB, own)
			wantError(t, resp, b, http.StatusNotFound, CodeUnknownCall)
		case r.header == nil && r.method == http.MethodGet:
			if resp, b := as(keyB, own); resp.StatusCode != http.StatusOK {
				t.Errorf("key B %s: %d %s", own.path, resp.StatusCode, b)
			}
		}
	}
	resp, b = as(keyA, request{method: http.MethodPost, path: "/v1/run", body: fmt.Sprintf(`{"code": "return 1", "session_id": %q}`, idB)})
	mresp, mb = as(keyA, request{method: http.MethodPost, path: "/v1/run", body: `{"code": "return 1", "session_id": "nosuch"}`})
	sameAsMissing("run in session", resp, b, mresp, mb, idB, "nosuch")

	// Nothing key A tried reached key B's log.
	resp, b = as(keyB, request{method: http.MethodGet, path: "/v1/sessions/" + idB + "/events"})
	if evs := decode[struct{ Events []eventJSON }](t, resp, b, http.StatusOK).Events; len(evs) != 0 {
		t.Errorf("key A's attempts reached key B's session: %s", b)
	}
	// Each key works in its own session.
	resp, b = as(keyA, request{method: http.MethodPost, path: "/v1/run", body: fmt.Sprintf(`{"code": "return 1", "session_id": %q}`, idA)})
	decode[runResult](t, resp, b, http.StatusOK)
}

func TestScopeAllowedOutsideAServerFailsClosed(t *testing.T) {
	if ScopeAllowed(t.Context(), "default") {
		t.Fatal("a context from no request may use a scope")
	}
}

func TestCheckListen(t *testing.T) {
	withKeys := config.Default()
	withKeys.APIKeys = []config.APIKey{{SHA256: digest("k"), Scopes: []string{"default"}}}
	allowed := config.Default()
	allowed.Server.AllowNonLoopback = true
	tests := []struct {
		addr         string
		cfg          config.Config
		loopbackOnly bool
		err          string
	}{
		{"127.0.0.1:8080", config.Default(), true, ""},
		{"127.0.0.5:0", config.Default(), true, ""},
		{"[::1]:8080", config.Default(), true, ""},
		{"localhost:8080", config.Default(), true, ""},
		{"0.0.0.0:8080", config.Default(), true, "0.0.0.0 is not a loopback address"},
		{":8080", config.Default(), true, "every interface"},
		{"[::]:8080", config.Default(), true, "not a loopback"},
		{"10.1.2.3:8080", config.Default(), true, "api_keys"},
		{"example.com:80", config.Default(), true, "not a loopback"},
		{"nonsense", config.Default(), true, "HOST:PORT"},
		{"0.0.0.0:8080", withKeys, false, ""},
		{"0.0.0.0:8080", allowed, false, ""},
	}
	for _, tt := range tests {
		only, err := CheckListen(tt.addr, tt.cfg)
		if only != tt.loopbackOnly || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("CheckListen(%q) = %v, %v; want %v, error with %q", tt.addr, only, err, tt.loopbackOnly, tt.err)
		}
	}
}
