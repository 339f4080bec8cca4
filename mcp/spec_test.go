package mcp

// Tests of /mcp and stdio against the letter of the specification, where
// the go-sdk alone would answer otherwise.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
)

// rawSession initializes an MCP session over raw HTTP with protocol
// version and returns its id.
func rawSession(t *testing.T, url, version string) string {
	t.Helper()
	resp := testkit.MCPInitialize(t, url, version)
	id := resp.Header.Get(sessionHeader)
	if id == "" {
		t.Fatalf("no session id (status %d)", resp.StatusCode)
	}
	if status, body := post(t, url, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", status, body)
	}
	return id
}

func TestHTTPUnknownMethodIsMethodNotFound(t *testing.T) {
	srv, _ := newHTTP(t, HandlerOptions{})
	url := srv.URL + "/mcp"
	id := rawSession(t, url, legacyProtocol)
	status, body := post(t, url, id, `{"jsonrpc":"2.0","id":7,"method":"tools/frobnicate","params":{}}`)
	var resp struct {
		ID    int `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &resp) != nil || resp.ID != 7 || resp.Error.Code != -32601 || !strings.Contains(resp.Error.Message, "tools/frobnicate") {
		t.Errorf("unknown method: %d %s", status, body)
	}
	if status, body := post(t, url, id, `{"jsonrpc":"2.0","method":"notifications/frobnicated"}`); status != http.StatusAccepted {
		t.Errorf("unknown notification: %d %s", status, body)
	}
}

// TestHTTPKnownMethods keeps sdkServerMethods in step with the go-sdk: each
// listed method reaches it (no -32601 from us, no plain-text 400 from it).
func TestHTTPKnownMethods(t *testing.T) {
	srv, _ := newHTTP(t, HandlerOptions{})
	url := srv.URL + "/mcp"
	id := rawSession(t, url, legacyProtocol)
	for m := range sdkServerMethods {
		if strings.HasPrefix(m, "notifications/") || m == "initialize" || m == "subscriptions/listen" || m == "server/discover" {
			continue
		}
		status, body := post(t, url, id, fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":%q,"params":{}}`, m))
		if strings.Contains(body, fmt.Sprintf("method not found: %q", m)) && !strings.Contains(body, "event:") || (status == http.StatusBadRequest && !strings.Contains(body, "jsonrpc")) {
			t.Errorf("%s: %d %s", m, status, body)
		}
	}
}

func TestHTTPRequestWithoutSessionIs400(t *testing.T) {
	srv, _ := newHTTP(t, HandlerOptions{})
	status, body := post(t, srv.URL+"/mcp", "", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	var resp struct {
		ID    int `json:"id"`
		Error struct{ Code int }
	}
	if status != http.StatusBadRequest || json.Unmarshal([]byte(body), &resp) != nil || resp.ID != 3 || resp.Error.Code != -32600 {
		t.Errorf("no session: %d %s", status, body)
	}
	if status, body := post(t, srv.URL+"/mcp", "", initialize); status != http.StatusOK {
		t.Errorf("initialize without a session: %d %s", status, body)
	}
}

// sseEvent is one server-sent event.
type sseEvent struct{ id, event, data, retry string }

func readEvents(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	seen := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if seen {
				out = append(out, cur)
			}
			cur, seen = sseEvent{}, false
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		seen = true
		switch k {
		case "id":
			cur.id = v
		case "event":
			cur.event = v
		case "data":
			cur.data += v
		case "retry":
			cur.retry = v
		}
	}
	return out
}

// TestHTTPSSEPrimingAndRetry: an SSE response starts with a priming event
// (an id, no data); a call that outlasts StreamPollAfter has its stream
// closed with a retry field, and the client that resumes with Last-Event-ID
// gets the result.
func TestHTTPSSEPrimingAndRetry(t *testing.T) {
	srv, _ := newHTTP(t, HandlerOptions{StreamPollAfter: 50 * time.Millisecond})
	url := srv.URL + "/mcp?scope=plain"
	id := rawSession(t, url, legacyProtocol)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"util_sleep","arguments":{"ms":300}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream, application/json")
	req.Header.Set(sessionHeader, id)
	req.Header.Set("Mcp-Protocol-Version", legacyProtocol)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := readEvents(t, resp.Body)
	resp.Body.Close()
	if len(events) < 2 || events[0].id == "" || events[0].data != "" {
		t.Fatalf("events %+v: want a priming event first", events)
	}
	last := events[len(events)-1]
	if last.retry == "" {
		t.Fatalf("events %+v: want a retry field when the stream closes", events)
	}
	for _, e := range events {
		if strings.Contains(e.data, `"id":5`) {
			t.Fatalf("the result came before the stream closed: %+v", events)
		}
	}
	get, _ := http.NewRequest(http.MethodGet, url, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set(sessionHeader, id)
	get.Header.Set("Mcp-Protocol-Version", legacyProtocol)
	get.Header.Set("Last-Event-ID", events[0].id)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err = http.DefaultClient.Do(get.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"id":5`) && strings.Contains(sc.Text(), `"slept_ms":300`) {
			return
		}
	}
	t.Fatalf("the resumed stream ended without the result: %v", sc.Err())
}

// TestToolListChangeLogsOnce: a change of the tool list is one log line,
// however many (idle) HTTP sessions it notifies.
func TestToolListChangeLogsOnce(t *testing.T) {
	var logs testkit.Logs
	a := newApp(t)
	h := Handler(a, HandlerOptions{Logger: logs.Logger()})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	for range 3 {
		rawSession(t, srv.URL+"/mcp", legacyProtocol)
	}
	tool, err := registry.Define(registry.Definition{Name: "late", Description: "Added later.", Output: schema.Object(nil, nil, false),
		Behavior: registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return map[string]any{}, nil }}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Registry.Register("default", tool); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the change to be logged", func() bool { return strings.Contains(logs.String(), "tool list changed") })
	time.Sleep(100 * time.Millisecond) // nothing more may be logged for it
	if n := strings.Count(logs.String(), "level=WARN"); n != 0 {
		t.Errorf("%d warnings:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "tool list changed"); n != 1 {
		t.Errorf("%d lines for one change:\n%s", n, logs.String())
	}
}

// TestStdioNoResponseForCancelledRequest: a request the client cancels
// gets no response over stdio.
func TestStdioNoResponseForCancelledRequest(t *testing.T) {
	a := newApp(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(ctx, a, "plain", inR, outW, Options{Logger: discard}) }()
	var mu sync.Mutex
	var lines []string
	got := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
			got <- sc.Text()
		}
	}()
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	<-got
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"util_sleep","arguments":{"ms":60000}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user"}}`)
	// Calls of one session run in order, so when the next call has
	// answered, the cancelled one has ended.
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"math_add","arguments":{"a":1,"b":2}}}`)
	for line := range got {
		if strings.Contains(line, `"id":4`) {
			break
		}
	}
	inW.Close()
	<-done
	mu.Lock()
	defer mu.Unlock()
	for _, l := range lines {
		if strings.Contains(l, `"id":2`) {
			t.Errorf("a response was sent for the cancelled request: %s", l)
		}
	}
}
