package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/testkit"
	"github.com/prometheus/client_golang/prometheus"
)

func TestBodyLimit(t *testing.T) {
	ts := newTestServer(t, "server: {max_body_bytes: 1KiB}")
	id := ts.newSession("", "")
	big := `{"code": "return '` + strings.Repeat("x", 2000) + `'"}`
	small := `{"code": "return '` + strings.Repeat("x", 900) + `'"}`

	resp, b := ts.post("/v1/run", big)
	if msg := wantError(t, resp, b, http.StatusRequestEntityTooLarge, CodeBodyTooLarge); !strings.Contains(msg, "1024") {
		t.Errorf("message %q does not state the limit", msg)
	}
	// Without a Content-Length (chunked), the limit applies while reading.
	resp, b = ts.do(request{method: http.MethodPost, path: "/v1/run", body: io.MultiReader(strings.NewReader(big))})
	if resp.Request.ContentLength != -1 && resp.Request.ContentLength != 0 {
		t.Fatalf("the test body was sent with a length (%d)", resp.Request.ContentLength)
	}
	wantError(t, resp, b, http.StatusRequestEntityTooLarge, CodeBodyTooLarge)
	resp, b = ts.post("/v1/sessions/"+id+"/steps", `{"tool_calls": [{"id": "c", "name": "util_echo", "arguments": "`+strings.Repeat("y", 2000)+`"}]}`)
	wantError(t, resp, b, http.StatusRequestEntityTooLarge, CodeBodyTooLarge)

	ts.runOK(map[string]any{"code": small[len(`{"code": "`) : len(small)-2]})
}

// holdRun starts a run that sleeps until its request is cancelled, and waits
// until it holds a run slot.
func (ts *testServer) holdRun(wantInflight float64) (cancel func()) {
	ts.t.Helper()
	cancel = ts.startRun(`{"code": "await tools.util_sleep({ms: 60000})"}`)
	testkit.Eventually(ts.t, "the held run to take a slot", func() bool { return ts.inflight() == wantInflight })
	return cancel
}

// startRun posts body to /v1/run without waiting; cancel cancels the request
// and waits until it has ended.
func (ts *testServer) startRun(body string) (cancel func()) {
	ctx, cancelReq := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := ts.send(request{method: http.MethodPost, path: "/v1/run", body: body, ctx: ctx})
		if err == nil {
			resp.Body.Close()
		}
	}()
	return func() {
		cancelReq()
		<-done
	}
}

func TestOverloadWithoutQueue(t *testing.T) {
	ts := newTestServer(t, "server: {max_inflight_runs: 1, max_queued_runs: 0}")
	id := ts.newSession("", "")
	release := ts.holdRun(1)

	resp, b := ts.post("/v1/run", `{"code": "return 1"}`)
	wantError(t, resp, b, http.StatusServiceUnavailable, CodeOverloaded)
	if resp.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	resp, b = ts.post("/v1/sessions/"+id+"/steps", `{"tool_calls": [{"id": "c", "name": "math_add", "arguments": "{\"a\":1,\"b\":1}"}]}`)
	wantError(t, resp, b, http.StatusServiceUnavailable, CodeOverloaded)
	// Everything that is not a run is still served.
	if resp, _ := ts.get("/v1/tools"); resp.StatusCode != http.StatusOK {
		t.Errorf("tools while overloaded: %d", resp.StatusCode)
	}

	release()
	testkit.Eventually(t, "the slot to be free", func() bool { return ts.inflight() == 0 })
	ts.runOK(map[string]any{"code": "return 1"})
	if got := metricValue(ts.srv.metrics.runs.WithLabelValues(entryRun, outcomeOverloaded)); got != 1 {
		t.Errorf("overloaded runs counted %v, want 1", got)
	}
}

func TestOverloadWithQueue(t *testing.T) {
	ts := newTestServer(t, "server: {max_inflight_runs: 1, max_queued_runs: 1}")
	release := ts.holdRun(1)

	// A queued request that gives up leaves the queue.
	giveUp := ts.startRun(`{"code": "return 1"}`)
	testkit.Eventually(t, "a queued run", func() bool { return ts.queued() == 1 })
	giveUp()
	testkit.Eventually(t, "the queue to empty", func() bool { return ts.queued() == 0 })
	if ts.inflight() != 1 {
		t.Fatalf("in flight %v, want the held run", ts.inflight())
	}

	queued := ts.sendAsync(request{method: http.MethodPost, path: "/v1/run", body: `{"code": "return 'queued'"}`})
	testkit.Eventually(t, "a queued run", func() bool { return ts.queued() == 1 })

	resp, b := ts.post("/v1/run", `{"code": "return 1"}`)
	wantError(t, resp, b, http.StatusServiceUnavailable, CodeOverloaded)

	release()
	select {
	case out := <-queued:
		res := decode[runResult](t, out.resp, out.body, http.StatusOK)
		if string(res.result(t)) != `"queued"` {
			t.Errorf("queued run: %s", res.Value)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the queued run did not run when the slot came free")
	}
	testkit.Eventually(t, "an empty limiter", func() bool { return ts.inflight() == 0 && ts.queued() == 0 })
}

func TestRequestTimeout(t *testing.T) {
	ts := newTestServer(t, "server: {request_timeout: 100ms}")
	resp, b := ts.post("/v1/run", `{"code": "await tools.util_sleep({ms: 60000}); return 1"}`)
	res := decode[runResult](t, resp, b, http.StatusOK)
	if !res.IsError {
		t.Fatalf("a run outlived the request timeout: %s", b)
	}
	// Event streams are exempt: one stays open past the timeout.
	id := ts.newSession("", "")
	s := ts.openStream("/v1/sessions/"+id+"/events", nil)
	time.Sleep(300 * time.Millisecond)
	ts.runOK(map[string]any{"code": "return 1", "session_id": id})
	if ev, ok := s.next(); !ok || ev.event != "tool/call" {
		t.Fatalf("stream after the request timeout: %+v %v", ev, ok)
	}
}

func TestRateLimit(t *testing.T) {
	t.Run("by client address", func(t *testing.T) {
		ts := newTestServer(t, "server: {rate_limit: 3, rate_window: 1m}")
		for i := 0; i < 3; i++ {
			if resp, b := ts.get("/v1/tools"); resp.StatusCode != http.StatusOK {
				t.Fatalf("request %d: %d %s", i, resp.StatusCode, b)
			}
		}
		resp, b := ts.get("/v1/tools")
		wantError(t, resp, b, http.StatusTooManyRequests, CodeRateLimited)
		if ra := resp.Header.Get("Retry-After"); ra != "60" {
			t.Errorf("Retry-After %q, want 60", ra)
		}
		if resp, _ := ts.get("/healthz"); resp.StatusCode != http.StatusOK {
			t.Errorf("healthz is rate limited: %d", resp.StatusCode)
		}
	})
	t.Run("by key", func(t *testing.T) {
		ts := newTestServer(t, keysYAML+"server: {rate_limit: 2, rate_window: 1m}")
		for i := 0; i < 2; i++ {
			if resp, b := ts.do(request{method: http.MethodGet, path: "/v1/tools", key: keyA}); resp.StatusCode != http.StatusOK {
				t.Fatalf("key A request %d: %d %s", i, resp.StatusCode, b)
			}
		}
		resp, b := ts.do(request{method: http.MethodGet, path: "/v1/tools", key: keyA})
		wantError(t, resp, b, http.StatusTooManyRequests, CodeRateLimited)
		// Another key has its own budget.
		if resp, b := ts.do(request{method: http.MethodGet, path: "/v1/tools?scope=readonly", key: keyB}); resp.StatusCode != http.StatusOK {
			t.Fatalf("key B: %d %s", resp.StatusCode, b)
		}
		// Guessing keys spends the client address's budget.
		for i := 0; i < 2; i++ {
			resp, b := ts.do(request{method: http.MethodGet, path: "/v1/tools", key: "guess"})
			wantError(t, resp, b, http.StatusUnauthorized, CodeUnauthorized)
		}
		resp, b = ts.do(request{method: http.MethodGet, path: "/v1/tools", key: "guess"})
		wantError(t, resp, b, http.StatusTooManyRequests, CodeRateLimited)
	})
}

func newTestLimiter(slots, queue int) *runLimiter {
	return newRunLimiter(slots, queue, prometheus.NewGauge(prometheus.GaugeOpts{Name: "i"}), prometheus.NewGauge(prometheus.GaugeOpts{Name: "q"}))
}

func (l *runLimiter) counts() (inflight, queued int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inflight, l.queue.Len()
}

// TestRunLimiterFIFO: queued runs get slots in arrival order.
func TestRunLimiterFIFO(t *testing.T) {
	l := newTestLimiter(1, 4)
	first, err := l.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := 1; i <= 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := l.acquire(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			release()
		}()
		testkit.Eventually(t, "the run to queue", func() bool { _, q := l.counts(); return q == i })
	}
	if _, err := l.acquire(context.Background()); !errors.Is(err, errOverloaded) {
		t.Fatalf("acquire with a full queue: %v", err)
	}
	first()
	first() // releasing twice is harmless
	wg.Wait()
	if want := []int{1, 2, 3, 4}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if in, q := l.counts(); in != 0 || q != 0 {
		t.Fatalf("after all: %d in flight, %d queued", in, q)
	}
}

func TestRunLimiterCancelAndStop(t *testing.T) {
	l := newTestLimiter(1, 2)
	release, _ := l.acquire(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 2)
	go func() { _, err := l.acquire(ctx); errc <- err }()
	testkit.Eventually(t, "queued", func() bool { _, q := l.counts(); return q == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	if _, q := l.counts(); q != 0 {
		t.Fatal("a cancelled waiter stayed in the queue")
	}

	go func() { _, err := l.acquire(context.Background()); errc <- err }()
	testkit.Eventually(t, "queued", func() bool { _, q := l.counts(); return q == 1 })
	l.stop()
	if err := <-errc; !errors.Is(err, errStopping) {
		t.Fatalf("queued at stop: %v", err)
	}
	if _, err := l.acquire(context.Background()); !errors.Is(err, errStopping) {
		t.Fatalf("acquire after stop: %v", err)
	}
	release() // the run in flight finishes normally
	if in, q := l.counts(); in != 0 || q != 0 {
		t.Fatalf("after stop: %d in flight, %d queued", in, q)
	}
}

// TestRunLimiterStress: with waiters giving up at random moments, every
// slot comes back and the queue never exceeds its cap.
func TestRunLimiterStress(t *testing.T) {
	l := newTestLimiter(3, 5)
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%7)*100*time.Microsecond)
			defer cancel()
			release, err := l.acquire(ctx)
			if in, q := l.counts(); in > 3 || q > 5 {
				t.Errorf("%d in flight, %d queued", in, q)
			}
			if err == nil {
				time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
				release()
			}
		}()
	}
	wg.Wait()
	if in, q := l.counts(); in != 0 || q != 0 {
		t.Fatalf("after all: %d in flight, %d queued", in, q)
	}
}
