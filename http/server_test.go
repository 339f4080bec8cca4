package httpapi

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/codemode/codemode/config"
)

func TestHealthzIndexAndRouting(t *testing.T) {
	ts := newTestServer(t, "")

	resp, body := ts.get("/healthz")
	if got := decode[map[string]string](t, resp, body, http.StatusOK); got["status"] != "ok" || len(got) != 1 {
		t.Fatalf("healthz = %s", body)
	}

	resp, body = ts.get("/")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / = %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{"/v1/run", "/v1/sdk", "text/event-stream", "/metrics"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("index page does not mention %s", want)
		}
	}

	resp, body = ts.get("/v2/nothing")
	wantError(t, resp, body, http.StatusNotFound, CodeNotFound)

	resp, body = ts.post("/healthz", "{}")
	wantError(t, resp, body, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
	if allow := resp.Header.Values("Allow"); len(allow) != 1 || allow[0] != http.MethodGet {
		t.Errorf("405 Allow = %v, want [GET]", allow)
	}
	resp, body = ts.get("/v1/run")
	wantError(t, resp, body, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
	if allow := resp.Header.Values("Allow"); len(allow) != 1 || allow[0] != http.MethodPost {
		t.Errorf("405 Allow = %v, want [POST]", allow)
	}
}

func TestPlaygroundAndMCPMounts(t *testing.T) {
	var mu sync.Mutex
	var mcpCalls []string
	ts := newTestServer(t, "", func(su *serverSetup) {
		su.opts.Playground = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("playground"))
		})
		su.opts.MCP = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			mcpCalls = append(mcpCalls, r.URL.Path)
			mu.Unlock()
			if !ScopeAllowed(r.Context(), "default") {
				t.Error("an open server's MCP request may not use the default scope")
			}
			w.WriteHeader(http.StatusAccepted)
		})
	})
	if _, body := ts.get("/"); string(body) != "playground" {
		t.Errorf("GET / = %q, want the playground handler's page", body)
	}
	if resp, _ := ts.post("/mcp", "{}"); resp.StatusCode != http.StatusAccepted {
		t.Errorf("POST /mcp = %d", resp.StatusCode)
	}
	if resp, _ := ts.get("/mcp/sub"); resp.StatusCode != http.StatusAccepted {
		t.Errorf("GET /mcp/sub = %d", resp.StatusCode)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(mcpCalls, ",") != "/mcp,/mcp/sub" {
		t.Errorf("MCP handler saw %v", mcpCalls)
	}
	// Without an MCP handler there is no /mcp.
	plain := newTestServer(t, "")
	resp, body := plain.post("/mcp", "{}")
	wantError(t, resp, body, http.StatusNotFound, CodeNotFound)
}

// TestNewRejectsBadKeyDigest: a digest New cannot decode fails New rather
// than leaving a key no secret matches (config.Validate refuses it first).
func TestNewRejectsBadKeyDigest(t *testing.T) {
	b, _ := newTestApp(t, "", nil)
	b.Config.APIKeys = []config.APIKey{{SHA256: "zz", Scopes: []string{"default"}}}
	if _, err := New(b, Options{}); err == nil || !strings.Contains(err.Error(), "api_keys[0].sha256") {
		t.Fatalf("New with a bad key digest: %v", err)
	}
}
