package httpapi

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/testkit"
)

// serveTestServer runs a Server with Serve on a loopback listener; cancel
// starts its shutdown and served delivers Serve's result.
func serveTestServer(t *testing.T, yml string) (ts *testServer, cancel func(), served <-chan error) {
	t.Helper()
	a, logs := newTestApp(t, yml, nil)
	srv, err := New(a, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancelCtx := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		errc <- srv.Serve(ctx, ln)
	}()
	t.Cleanup(func() {
		cancelCtx()
		select {
		case <-returned:
		case <-time.After(30 * time.Second):
			t.Error("Serve did not return")
		}
	})
	return &testServer{t: t, app: a, srv: srv, url: "http://" + ln.Addr().String(), logs: logs}, cancelCtx, errc
}

// TestShutdownFinishesRunsInFlight: on shutdown a run in flight finishes and
// its result is delivered, a queued run is turned away, event streams end,
// and then the server stops.
func TestShutdownFinishesRunsInFlight(t *testing.T) {
	ts, shutdown, served := serveTestServer(t, "server: {shutdown_grace: 1m, max_inflight_runs: 1, max_queued_runs: 1}")
	id := ts.newSession("", "")
	stream := ts.openStream("/v1/sessions/"+id+"/events", nil)

	run := ts.sendAsync(request{method: http.MethodPost, path: "/v1/run",
		body: `{"code": "await tools.util_sleep({ms: 300}); return 'finished'", "session_id": "` + id + `"}`})
	testkit.Eventually(t, "the run to start", func() bool { return ts.inflight() == 1 })
	queued := ts.sendAsync(request{method: http.MethodPost, path: "/v1/run", body: `{"code": "return 'late'"}`})
	testkit.Eventually(t, "a queued run", func() bool { return ts.queued() == 1 })

	shutdown()

	q := <-queued
	if q.err != nil {
		t.Fatal(q.err)
	}
	wantError(t, q.resp, q.body, http.StatusServiceUnavailable, CodeShuttingDown)

	for {
		if _, ok := stream.next(); !ok {
			break // the stream ended at shutdown
		}
	}

	out := <-run
	if out.err != nil {
		t.Fatalf("the run in flight lost its response: %v", out.err)
	}
	res := decode[runResult](t, out.resp, out.body, http.StatusOK)
	if string(res.result(t)) != `"finished"` {
		t.Fatalf("run result %s", out.body)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its runs finished")
	}
	if _, err := http.Get(ts.url + "/healthz"); err == nil {
		t.Error("the server still accepts connections after Serve returned")
	}
}

// TestShutdownCancelsRunsAfterGrace: a run still going when the grace
// period ends is cancelled; its (failed) result is still delivered.
func TestShutdownCancelsRunsAfterGrace(t *testing.T) {
	ts, shutdown, served := serveTestServer(t, "server: {shutdown_grace: 50ms}")
	run := ts.sendAsync(request{method: http.MethodPost, path: "/v1/run", body: `{"code": "await tools.util_sleep({ms: 60000}); return 'too late'"}`})
	testkit.Eventually(t, "the run to start", func() bool { return ts.inflight() == 1 })
	shutdown()

	out := <-run
	if out.err != nil {
		t.Fatalf("the cancelled run lost its response: %v", out.err)
	}
	res := decode[runResult](t, out.resp, out.body, http.StatusOK)
	if !res.IsError {
		t.Fatalf("a run outlived the shutdown grace: %s", out.body)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	logLine(t, ts.logs, "shutdown grace is over")
}
