package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/codemode/codemode/internal/testkit"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// newHTTP serves the app's /mcp handler on a test server.
func newHTTP(t *testing.T, opts HandlerOptions) (*httptest.Server, *HTTPHandler) {
	t.Helper()
	a := newApp(t)
	opts.Logger = discard
	h := Handler(a, opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	return srv, h
}

// httpClient connects a go-sdk client to url.
func httpClient(t *testing.T, url string, hc *http.Client) (*sdk.ClientSession, error) {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{Logger: discard}).
		Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// headerClient adds a header to every request.
func headerClient(k, v string) *http.Client {
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set(k, v)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestHTTPScopes(t *testing.T) {
	srv, _ := newHTTP(t, HandlerOptions{})
	tests := []struct {
		name, query string
		header      string
		want        []string
	}{
		{"query parameter", "?scope=coder", "", []string{"run_code"}},
		{"header", "", "coder", []string{"run_code"}},
		{"query beats header", "?scope=coder", "plain", []string{"run_code"}},
		{"default", "", "", nil}, // the default scope: demo tools and run_code
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hc *http.Client
			if tt.header != "" {
				hc = headerClient(ScopeHeader, tt.header)
			}
			cs, err := httpClient(t, srv.URL+"/mcp"+tt.query, hc)
			if err != nil {
				t.Fatal(err)
			}
			names := toolNames(t, cs)
			if tt.want == nil {
				if !slices.Contains(names, "run_code") || !slices.Contains(names, "math_add") {
					t.Errorf("default scope tools %v", names)
				}
				return
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("tools %v, want %v", names, tt.want)
			}
			res := call(t, cs, "run_code", `{"code":"return (await tools.math_add({a: 1, b: 2})).sum","description":"adds"}`)
			if res.IsError || string(mustJSON(t, res.StructuredContent)) != `{"logs":[],"result":3}` {
				t.Errorf("run_code over HTTP: %v %s", res.IsError, text(res))
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// post sends one JSON-RPC message and returns the status and body.
func post(t *testing.T, url, sessionID, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sessionID != "" {
		req.Header.Set(sessionHeader, sessionID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func TestHTTPRefusals(t *testing.T) {
	srv, _ := newHTTP(t, HandlerOptions{ScopeAllowed: func(_ *http.Request, scope string) bool { return scope != "plain" }})
	cs, err := httpClient(t, srv.URL+"/mcp?scope=coder", nil)
	if err != nil {
		t.Fatal(err)
	}
	coderSession := cs.ID()
	if got, ok := sessionScope(coderSession); !ok || got != "coder" {
		t.Fatalf("session id %q does not record its scope (%q)", coderSession, got)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	tests := []struct {
		name, query, session, body string
		status                     int
		code                       string // the error code; "" for a success
	}{
		{"unknown scope", "?scope=nowhere", "", initialize, 404, "UNKNOWN_SCOPE"},
		{"refused scope looks unknown", "?scope=plain", "", initialize, 404, "UNKNOWN_SCOPE"},
		{"session used under another scope", "?scope=default", coderSession, list, 404, "UNKNOWN_SESSION"},
		{"session id that is not ours", "?scope=coder", "abc", list, 404, "UNKNOWN_SESSION"},
		{"session id naming a refused scope", "", "X." + "cGxhaW4", list, 404, "UNKNOWN_SESSION"}, // base64url("plain")
		{"session used without naming a scope", "", coderSession, list, 200, ""},
		{"session used under its own scope", "?scope=coder", coderSession, list, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, srv.URL+"/mcp"+tt.query, tt.session, tt.body)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			if tt.code == "" {
				if !strings.Contains(body, `"run_code"`) {
					t.Errorf("body %s lacks run_code", body)
				}
				return
			}
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code != tt.code || e.Error.Message == "" {
				t.Errorf("body %s, want error code %s", body, tt.code)
			}
		})
	}
}

func TestHTTPClose(t *testing.T) {
	srv, h := newHTTP(t, HandlerOptions{})
	if _, err := httpClient(t, srv.URL+"/mcp", nil); err != nil {
		t.Fatal(err)
	}
	h.Close()
	status, body := post(t, srv.URL+"/mcp", "", initialize)
	if status != http.StatusBadRequest {
		t.Errorf("new session after Close: %d %s", status, body)
	}
}

func TestCallFailureClasses(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	tests := []struct {
		err                 error
		broken, undelivered bool
	}{
		{fmt.Errorf("%w: calling %q", sdk.ErrConnectionClosed, "tools/call"), true, false},
		{fmt.Errorf("calling: %w", io.EOF), true, false},
		{fmt.Errorf("calling: %w", io.ErrClosedPipe), true, false},
		{fmt.Errorf("x: %w", sdk.ErrSessionMissing), false, true},
		{fmt.Errorf("sending \"tools/call\": %w: %w", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}, &url.Error{Op: "Post", URL: "http://x", Err: refused}), true, true},
		{fmt.Errorf("%w: %w", errExited, sdk.ErrConnectionClosed), true, true},
		{errors.New("unmarshaling result: unknown content type"), false, false},
		{&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}, false, false},
		{context.Canceled, false, false},
	}
	for _, tt := range tests {
		if got := connectionBroken(tt.err); got != tt.broken {
			t.Errorf("connectionBroken(%v) = %v, want %v", tt.err, got, tt.broken)
		}
		if got := notDelivered(tt.err); got != tt.undelivered {
			t.Errorf("notDelivered(%v) = %v, want %v", tt.err, got, tt.undelivered)
		}
	}
}

func FuzzSessionScope(f *testing.F) {
	for _, s := range []string{"default", "a", "ünïcode", "x.y", ""} {
		f.Add(s, newSessionID(s))
	}
	f.Add("", "abc")
	f.Add("", "A.")
	f.Add("", ".Zg")
	f.Fuzz(func(t *testing.T, scope, id string) {
		if scope != "" {
			got, ok := sessionScope(newSessionID(scope))
			if !ok || got != scope {
				t.Fatalf("round trip of %q gave %q, %v", scope, got, ok)
			}
		}
		if got, ok := sessionScope(id); ok && got == "" {
			t.Fatalf("sessionScope(%q) accepted an empty scope", id)
		}
	})
}

// The MCP sessions open at once are bounded, in all scopes together: an
// initialize beyond the bound is a 503 with Retry-After and a JSON-RPC
// error, and ending a session makes room for another. The bound holds
// against initializes that race each other.
func TestHTTPSessionsAreBounded(t *testing.T) {
	const max = 3
	srv, h := newHTTP(t, HandlerOptions{MaxSessions: max})
	var sessions []*sdk.ClientSession
	for i := range max {
		cs, err := httpClient(t, srv.URL+"/mcp"+[]string{"", "?scope=coder", "?scope=plain"}[i], nil)
		if err != nil {
			t.Fatalf("session %d of %d: %v", i+1, max, err)
		}
		sessions = append(sessions, cs)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(string(body), `"code":-32000`) || !strings.Contains(string(body), "max_mcp_sessions") || resp.Header.Get(sessionHeader) != "" {
		t.Fatalf("an initialize beyond %d sessions: %d %q %s", max, resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if _, err := httpClient(t, srv.URL+"/mcp?scope=coder", nil); err == nil {
		t.Fatal("a client connected beyond the bound")
	}
	if err := sessions[0].Close(); err != nil { // DELETE /mcp
		t.Fatal(err)
	}
	testkit.Eventually(t, "the closed session to be forgotten", func() bool { return h.sessions.count() == max-1 })
	if _, err := httpClient(t, srv.URL+"/mcp", nil); err != nil {
		t.Fatalf("a session after one ended: %v", err)
	}

	// Racing initializes: never more than the bound is open.
	srv2, h2 := newHTTP(t, HandlerOptions{MaxSessions: max})
	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body := post(t, srv2.URL+"/mcp", "", initialize); code == http.StatusOK && strings.Contains(body, `"result"`) {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := ok.Load(); n > max || n == 0 {
		t.Errorf("%d of 24 racing initializes succeeded, want 1 to %d", n, max)
	}
	if n := h2.sessions.count(); n > max {
		t.Errorf("%d sessions open, bound %d", n, max)
	}
}
