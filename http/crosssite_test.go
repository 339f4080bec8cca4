package httpapi

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// mcpProbe stands in for the MCP handler: it counts the requests that reach it.
type mcpProbe struct{ reached atomic.Int64 }

func (p *mcpProbe) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.reached.Add(1)
	writeJSON(w, http.StatusOK, map[string]string{"reached": "mcp"})
}

// TestCrossSiteRequestsAreRefused: a state-changing request that a page of
// another origin made (a foreign Origin, or the browser's Sec-Fetch-Site
// saying so) is refused with 403 before any handler runs, on /v1 and on
// /mcp (there for every method, as the MCP specification requires); a body
// not labelled as JSON is a 415; same-origin and non-browser requests work.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	probe := &mcpProbe{}
	ts := newTestServer(t, "server: {allowed_origins: ['https://trusted.example']}", func(su *serverSetup) { su.opts.MCP = probe })
	self := strings.TrimPrefix(ts.url, "http://")
	run := `{"code": "return 1"}`
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		header  map[string]string
		status  int
		code    string
		message string
	}{
		{name: "foreign origin", path: "/v1/run", body: run, header: map[string]string{"Origin": "https://evil.example"},
			status: 403, code: CodeCrossOrigin, message: `Origin "https://evil.example" is not this server's origin`},
		{name: "null origin", path: "/v1/sessions", body: `{}`, header: map[string]string{"Origin": "null"}, status: 403, code: CodeCrossOrigin},
		{name: "foreign origin on the same host, another port", path: "/v1/run", body: run,
			header: map[string]string{"Origin": "http://127.0.0.1:1"}, status: 403, code: CodeCrossOrigin},
		{name: "cross-site fetch", path: "/v1/run", body: run, header: map[string]string{"Sec-Fetch-Site": "cross-site"},
			status: 403, code: CodeCrossOrigin, message: "Sec-Fetch-Site: cross-site"},
		{name: "same-site fetch", path: "/v1/sessions", body: `{}`, header: map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:3000"},
			status: 403, code: CodeCrossOrigin},
		{name: "cross-site step", path: "/v1/sessions/x/steps", body: `{"tool_calls": []}`,
			header: map[string]string{"Origin": "https://evil.example"}, status: 403, code: CodeCrossOrigin},
		{name: "cross-site answer", path: "/v1/sessions/x/approvals/y", body: `{"decision": "allow"}`,
			header: map[string]string{"Sec-Fetch-Site": "cross-site"}, status: 403, code: CodeCrossOrigin},
		{name: "text/plain", path: "/v1/run", body: run, header: map[string]string{"Content-Type": "text/plain"},
			status: 415, code: CodeUnsupportedMediaType, message: `Content-Type "text/plain" is not JSON`},
		{name: "form", path: "/v1/run", body: "code=return+1", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			status: 415, code: CodeUnsupportedMediaType},
		{name: "multipart", path: "/v1/sessions", body: "--x--", header: map[string]string{"Content-Type": "multipart/form-data; boundary=x"},
			status: 415, code: CodeUnsupportedMediaType},
		{name: "no content type with a body", path: "/v1/run", body: run, header: map[string]string{"Content-Type": ""},
			status: 415, code: CodeUnsupportedMediaType, message: "no Content-Type"},
		{name: "mcp from a foreign origin", path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
			header: map[string]string{"Origin": "https://evil.example"}, status: 403, code: CodeCrossOrigin},
		{name: "mcp stream from a foreign origin", method: http.MethodGet, path: "/mcp",
			header: map[string]string{"Origin": "https://evil.example", "Accept": "text/event-stream"}, status: 403, code: CodeCrossOrigin},
		{name: "mcp delete from a cross-site page", method: http.MethodDelete, path: "/mcp",
			header: map[string]string{"Sec-Fetch-Site": "cross-site"}, status: 403, code: CodeCrossOrigin},
		{name: "mcp with text/plain", path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
			header: map[string]string{"Content-Type": "text/plain;charset=UTF-8"}, status: 415, code: CodeUnsupportedMediaType},

		{name: "same origin", path: "/v1/run", body: run, header: map[string]string{"Origin": ts.url, "Sec-Fetch-Site": "same-origin"}, status: 200},
		{name: "same origin without fetch metadata", path: "/v1/sessions", body: `{}`, header: map[string]string{"Origin": ts.url}, status: 201},
		{name: "a trusted origin", path: "/v1/run", body: run, header: map[string]string{"Origin": "https://trusted.example", "Sec-Fetch-Site": "cross-site"}, status: 200},
		{name: "typed by the user", path: "/v1/sessions", body: `{}`, header: map[string]string{"Sec-Fetch-Site": "none"}, status: 201},
		{name: "not a browser", path: "/v1/run", body: run, status: 200},
		{name: "json with a charset", path: "/v1/run", body: run, header: map[string]string{"Content-Type": "application/json; charset=utf-8"}, status: 200},
		{name: "a +json type", path: "/v1/run", body: run, header: map[string]string{"Content-Type": "application/vnd.api+json"}, status: 200},
		{name: "no body, no content type", path: "/v1/sessions", header: map[string]string{"Content-Type": ""}, status: 201},
		{name: "cross-site reads are not writes", method: http.MethodGet, path: "/v1/tools", header: map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, status: 200},
		{name: "mcp same origin", path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, header: map[string]string{"Origin": "http://" + self}, status: 200},
		{name: "mcp stream same origin", method: http.MethodGet, path: "/mcp", header: map[string]string{"Origin": ts.url, "Sec-Fetch-Site": "same-origin"}, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			req := request{method: method, path: tt.path, header: tt.header}
			if tt.body != "" {
				req.body = tt.body
			}
			before := probe.reached.Load()
			resp, body := ts.do(req)
			if tt.code == "" {
				if resp.StatusCode != tt.status {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
				}
				return
			}
			msg := wantError(t, resp, body, tt.status, tt.code)
			if !strings.Contains(msg, tt.message) {
				t.Fatalf("message %q, want %q in it", msg, tt.message)
			}
			if probe.reached.Load() != before {
				t.Fatal("the refused request reached the MCP handler")
			}
		})
	}
	// Nothing refused ran or logged anything: only the allowed runs made sessions.
	if n := strings.Count(ts.logs.Counting("msg=run ", 5), "msg=run "); n != 5 {
		t.Errorf("%d runs logged, want the 5 allowed ones:\n%s", n, ts.logs)
	}
}

// TestRebindingIsRefused: a server listening on loopback answers only
// requests that name a loopback host (with any port) or an allowed host;
// a DNS-rebound name is refused with 403 on every route, before any handler.
func TestRebindingIsRefused(t *testing.T) {
	ts, _, _ := serveTestServer(t, "server: {allowed_hosts: [codemode.internal]}")
	_, port, _ := strings.Cut(strings.TrimPrefix(ts.url, "http://"), ":")
	for _, tt := range []struct {
		host   string
		method string
		path   string
		status int
	}{
		{"evil.example:" + port, http.MethodPost, "/v1/run", 403},
		{"evil.example:" + port, http.MethodGet, "/v1/tools", 403},
		{"evil.example", http.MethodGet, "/", 403},
		{"evil.example:" + port, http.MethodGet, "/metrics", 403},
		{"localhost.evil.example:" + port, http.MethodGet, "/healthz", 403},
		{"127.0.0.1.evil.example", http.MethodGet, "/healthz", 403},
		{"192.168.1.10:" + port, http.MethodGet, "/healthz", 403},
		{"localhost:" + port, http.MethodPost, "/v1/run", 200},
		{"LOCALHOST", http.MethodGet, "/healthz", 200},
		{"127.0.0.1:" + port, http.MethodGet, "/healthz", 200},
		{"127.0.0.2:9", http.MethodGet, "/healthz", 200},
		{"[::1]:" + port, http.MethodGet, "/healthz", 200},
		{"[::1]", http.MethodGet, "/healthz", 200},
		{"codemode.internal", http.MethodGet, "/healthz", 200},
		{"Codemode.Internal:443", http.MethodGet, "/healthz", 200},
	} {
		req := request{method: tt.method, path: tt.path, host: tt.host}
		if tt.method == http.MethodPost {
			req.body = `{"code": "return 1"}`
		}
		resp, body := ts.do(req)
		if tt.status != 200 {
			msg := wantError(t, resp, body, tt.status, CodeHostNotAllowed)
			if !strings.Contains(msg, "server.allowed_hosts") {
				t.Errorf("Host %s: message %q", tt.host, msg)
			}
			continue
		}
		if resp.StatusCode != 200 {
			t.Errorf("Host %s %s %s: %d %s", tt.host, tt.method, tt.path, resp.StatusCode, body)
		}
	}
	if n := strings.Count(ts.logs.Counting("msg=run ", 1), "msg=run "); n != 1 {
		t.Errorf("%d runs logged, want 1", n)
	}
}

// TestHostIsFreeOffLoopback: a server that does not listen on loopback (it
// then has API keys, or was told to allow it) takes any Host.
func TestHostIsFreeOffLoopback(t *testing.T) {
	ts := newTestServer(t, "")
	resp, body := ts.do(request{method: http.MethodGet, path: "/healthz", host: "codemode.example.com"})
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

func TestCrossSiteHelpers(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json": true, "Application/JSON; charset=utf-8": true, "application/problem+json": true,
		"text/json": false, "application/jsonx": false, "text/plain": false, "": false, "application/json;;": false,
	} {
		if got := isJSONType(ct); got != want {
			t.Errorf("isJSONType(%q) = %v", ct, got)
		}
	}
	c, err := newCrossSite(nil, []string{"[fd00::1]", "proxy.example."})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"localhost": true, "localhost.:80": true, "127.255.0.1": true, "[0:0:0:0:0:0:0:1]:8": true, "::1": true,
		"[fd00::1]:80": true, "proxy.example": true, "PROXY.example.:8080": true,
		"": false, ":80": false, "0.0.0.0:80": false, "[::]:80": false, "localhostx": false, "sub.localhost": false,
	} {
		if got := c.hostAllowed(host); got != want {
			t.Errorf("hostAllowed(%q) = %v", host, got)
		}
	}
	if _, err := newCrossSite([]string{"not an origin"}, nil); err == nil || !strings.Contains(err.Error(), "server.allowed_origins[0]") {
		t.Fatalf("a bad origin: %v", err)
	}
}

// FuzzCrossSiteHeaders: whatever Host, Origin, Sec-Fetch-Site and Content-Type a request
// carries, the checks answer without panicking, a refusal is a JSON error, and a Host they
// let through names a loopback address, localhost or an allowed host.
func FuzzCrossSiteHeaders(f *testing.F) {
	f.Add("127.0.0.1:8080", "http://127.0.0.1:8080", "same-origin", "application/json")
	f.Add("evil.example:8080", "https://evil.example", "cross-site", "text/plain;charset=UTF-8")
	f.Add("[::1]:1", "null", "", "application/vnd.x+json; charset=utf-8")
	f.Add("LOCALHOST.", "http://localhost:3000", "same-site", "multipart/form-data; boundary=x")
	f.Add("127.0.0.1.nip.io", "", "none", "")
	f.Add("[fd00::1]:80", "http://[fd00::1]", "", "application/json;;")
	c, err := newCrossSite([]string{"https://trusted.example"}, []string{"codemode.internal", "[fd00::1]"})
	if err != nil {
		f.Fatal(err)
	}
	a, _ := newTestApp(f, "", nil)
	srv, err := New(a, Options{Logger: discardLogger()})
	if err != nil {
		f.Fatal(err)
	}
	srv.loopback.Store(true)
	f.Fuzz(func(t *testing.T, host, origin, site, ct string) {
		if c.hostAllowed(host) {
			h := host
			if hh, _, err := net.SplitHostPort(host); err == nil {
				h = hh
			}
			h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
			ip := net.ParseIP(h)
			if h != "localhost" && h != "codemode.internal" && h != "fd00::1" && (ip == nil || !ip.IsLoopback()) {
				t.Fatalf("Host %q let through", host)
			}
		}
		_ = isJSONType(ct)
		req := httptest.NewRequest(http.MethodPost, "/v1/sessions", strings.NewReader(`{}`))
		req.Host = host
		for k, v := range map[string]string{"Origin": origin, "Sec-Fetch-Site": site, "Content-Type": ct} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%d: not JSON: %s", rec.Code, rec.Body)
		}
		if rec.Code == http.StatusCreated && !srv.crossSite.hostAllowed(host) {
			t.Fatalf("a session was created for Host %q", host)
		}
	})
}
