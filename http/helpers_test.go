package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/session"
)

// testServer is a Server over a fresh App on a loopback httptest server.
type testServer struct {
	t    *testing.T
	app  *app.App
	srv  *Server
	url  string
	logs *testkit.Logs
	sent atomic.Int64 // requests sent through send
}

// settled waits until every request sent so far has been counted and
// logged: a reply leaves before its request's metrics and access-log line.
func (ts *testServer) settled() {
	ts.t.Helper()
	const line = `msg="http request"`
	n := int(ts.sent.Load())
	if logged := strings.Count(ts.logs.Counting(line, n), line); logged < n {
		ts.t.Fatalf("%d requests sent, %d logged", n, logged)
	}
}

// serverSetup adjusts newTestServer.
type serverSetup struct {
	store session.Store // default: a new memory store
	opts  Options
}

// newTestServer starts a server whose configuration is the YAML yml over the
// defaults (isolation is always inproc).
func newTestServer(t *testing.T, yml string, setup ...func(*serverSetup)) *testServer {
	t.Helper()
	var su serverSetup
	for _, f := range setup {
		f(&su)
	}
	a, logs := newTestApp(t, yml, su.store)
	su.opts.Logger = logs.Logger()
	srv, err := New(a, su.opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &testServer{t: t, app: a, srv: srv, url: hs.URL, logs: logs}
}

func newTestApp(t testing.TB, yml string, store session.Store) (*app.App, *testkit.Logs) {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yml))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Isolation = "inproc"
	if store == nil {
		store = session.NewMemory()
	}
	logs := &testkit.Logs{}
	a, err := app.New(context.Background(), cfg, app.Options{Store: store, Logger: logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, logs
}

// request is one API call of a test.
type request struct {
	method, path string
	body         any               // marshalled as JSON unless a string or []byte (sent verbatim)
	header       map[string]string // extra headers
	key          string            // sent as a bearer token when set
	host         string            // the Host header, when set
	ctx          context.Context
}

// do sends a request and returns the response with its body read.
func (ts *testServer) do(req request) (*http.Response, []byte) {
	ts.t.Helper()
	resp, err := ts.send(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", req.method, req.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatalf("%s %s: read body: %v", req.method, req.path, err)
	}
	return resp, b
}

// send sends a request; the caller closes the body.
func (ts *testServer) send(req request) (*http.Response, error) {
	var body io.Reader
	switch b := req.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	case io.Reader:
		body = b // of unknown length: sent chunked
	default:
		data, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		body = bytes.NewReader(data)
	}
	ctx := req.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ts.sent.Add(1)
	hr, err := http.NewRequestWithContext(ctx, req.method, ts.url+req.path, body)
	if err != nil {
		ts.t.Fatal(err)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.key != "" {
		hr.Header.Set("Authorization", "Bearer "+req.key)
	}
	for k, v := range req.header {
		hr.Header.Set(k, v)
	}
	if req.host != "" {
		hr.Host = req.host
	}
	return http.DefaultClient.Do(hr)
}

// get and post are the common requests.
func (ts *testServer) get(path string) (*http.Response, []byte) {
	ts.t.Helper()
	return ts.do(request{method: http.MethodGet, path: path})
}

func (ts *testServer) post(path string, body any) (*http.Response, []byte) {
	ts.t.Helper()
	return ts.do(request{method: http.MethodPost, path: path, body: body})
}

// decode unmarshals a JSON body, failing the test on a wrong status.
func decode[T any](t *testing.T, resp *http.Response, body []byte, status int) T {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, body)
	}
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s %s: decode %s: %v", resp.Request.Method, resp.Request.URL.Path, body, err)
	}
	return v
}

// apiErrorBody is the error response shape.
type apiErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// wantError checks an error response's status, code and content type and
// returns its message.
func wantError(t *testing.T, resp *http.Response, body []byte, status int, code string) string {
	t.Helper()
	e := decode[apiErrorBody](t, resp, body, status)
	if e.Error.Code != code || e.Error.Message == "" {
		t.Fatalf("%s %s: error %+v, want code %s with a message", resp.Request.Method, resp.Request.URL.Path, e.Error, code)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error Content-Type %q", ct)
	}
	return e.Error.Message
}

// runResult is the run result of docs/contract.md as a client reads it.
type runResult struct {
	SessionID string          `json:"session_id"`
	CallID    string          `json:"call_id"`
	IsError   bool            `json:"is_error"`
	Value     json.RawMessage `json:"value"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Error *struct {
		Code    string `json:"code"`
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
	Calls []struct {
		SubCallID string          `json:"sub_call_id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		IsError   bool            `json:"is_error"`
	} `json:"calls"`
	Contexts      []json.RawMessage `json:"contexts"`
	ConcludesTurn bool              `json:"concludes_turn"`
}

// result decodes a successful run's result.
func (r runResult) result(t *testing.T) json.RawMessage {
	t.Helper()
	var v struct {
		Logs   []string        `json:"logs"`
		Result json.RawMessage `json:"result"`
	}
	if r.IsError {
		t.Fatalf("run failed: %+v %+v", r.Error, r.Content)
	}
	if err := json.Unmarshal(r.Value, &v); err != nil {
		t.Fatalf("run value %s: %v", r.Value, err)
	}
	return v.Result
}

// runOK posts a program and returns its successful result.
func (ts *testServer) runOK(body map[string]any) runResult {
	ts.t.Helper()
	resp, b := ts.post("/v1/run", body)
	res := decode[runResult](ts.t, resp, b, http.StatusOK)
	res.result(ts.t)
	return res
}

// stepResponseJSON is a step response as a client reads it.
type stepResponseJSON struct {
	Results []struct {
		ToolCallID string            `json:"tool_call_id"`
		IsError    bool              `json:"is_error"`
		Content    []json.RawMessage `json:"content"`
		Error      *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Meta json.RawMessage `json:"meta"`
	} `json:"results"`
	Contexts      []json.RawMessage `json:"contexts"`
	ConcludesTurn bool              `json:"concludes_turn"`
}

// newSession creates a session in scope ("" for the default).
func (ts *testServer) newSession(scope, key string) string {
	ts.t.Helper()
	body := map[string]any{}
	if scope != "" {
		body["scope"] = scope
	}
	resp, b := ts.do(request{method: http.MethodPost, path: "/v1/sessions", body: body, key: key})
	s := decode[struct{ ID, Scope string }](ts.t, resp, b, http.StatusCreated)
	if s.ID == "" {
		ts.t.Fatalf("no session id in %s", b)
	}
	return s.ID
}

// eventJSON is an event as the API returns it.
type eventJSON struct {
	Seq  int64  `json:"seq"`
	Type string `json:"type"`
	Time string `json:"time"`
	Name string `json:"name"`
}

// sseEvent is one event read from a stream.
type sseEvent struct {
	id, event string
	data      []byte
}

// sseReader reads a text/event-stream.
type sseReader struct {
	t      *testing.T
	resp   *http.Response
	sc     *bufio.Scanner
	cancel context.CancelFunc
	// comments seen so far (": heartbeat" and the like)
	comments []string
}

// openStream opens a session's event stream.
func (ts *testServer) openStream(path string, header map[string]string) *sseReader {
	ts.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := map[string]string{"Accept": "text/event-stream"}
	for k, v := range header {
		h[k] = v
	}
	resp, err := ts.send(request{method: http.MethodGet, path: path, header: h, ctx: ctx})
	if err != nil {
		cancel()
		ts.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		cancel()
		ts.t.Fatalf("stream %s: status %d: %s", path, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		cancel()
		ts.t.Fatalf("stream Content-Type %q", ct)
	}
	r := &sseReader{t: ts.t, resp: resp, sc: bufio.NewScanner(resp.Body), cancel: cancel}
	r.sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	ts.t.Cleanup(r.close)
	return r
}

func (r *sseReader) close() {
	r.cancel()
	r.resp.Body.Close()
}

// next reads the next event, skipping comments; ok is false at the end of
// the stream.
func (r *sseReader) next() (ev sseEvent, ok bool) {
	r.t.Helper()
	for r.sc.Scan() {
		line := r.sc.Text()
		switch {
		case line == "":
			if ev.event != "" || ev.data != nil {
				return ev, true
			}
		case strings.HasPrefix(line, ":"):
			r.comments = append(r.comments, line)
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = append(ev.data, strings.TrimPrefix(line, "data: ")...)
		default:
			r.t.Fatalf("unexpected stream line %q", line)
		}
	}
	return sseEvent{}, false
}

// nextComment reads until the next comment line; ok is false at the end of
// the stream.
func (r *sseReader) nextComment() (string, bool) {
	for r.sc.Scan() {
		if line := r.sc.Text(); strings.HasPrefix(line, ":") {
			return line, true
		}
	}
	return "", false
}

// until reads events until one of type typ arrives and returns all read.
func (r *sseReader) until(typ string) []sseEvent {
	r.t.Helper()
	var out []sseEvent
	for {
		ev, ok := r.next()
		if !ok {
			r.t.Fatalf("stream ended before %s; got %v", typ, types(out))
		}
		out = append(out, ev)
		if ev.event == typ {
			return out
		}
	}
}

func types(evs []sseEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.event
	}
	return out
}

// inflight and queued read the run limiter's gauges.
func (ts *testServer) inflight() float64 { return metricValue(ts.srv.metrics.inflight) }
func (ts *testServer) queued() float64   { return metricValue(ts.srv.metrics.queued) }

// streams reads the open event stream gauge.
func (ts *testServer) streams() float64 { return metricValue(ts.srv.metrics.streams) }

// response is a response with its body read.
type response struct {
	resp *http.Response
	body []byte
	err  error
}

// sendAsync sends a request in a goroutine; the channel delivers its
// response (err set when it failed).
func (ts *testServer) sendAsync(req request) <-chan response {
	out := make(chan response, 1)
	go func() {
		resp, err := ts.send(req)
		if err != nil {
			out <- response{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		out <- response{resp: resp, body: b, err: err}
	}()
	return out
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// metricValue reads a gauge or counter.
func metricValue(m prometheus.Metric) float64 {
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		panic(err)
	}
	if out.Gauge != nil {
		return out.GetGauge().GetValue()
	}
	return out.GetCounter().GetValue()
}
