package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/gopool"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/session/sqlite"
)

var (
	loadTest     = flag.Bool("load", false, "run TestLoad: concurrent clients of mixed runs against a loopback server")
	loadClients  = flag.Int("load.clients", 64, "TestLoad: concurrent clients")
	loadDuration = flag.Duration("load.duration", 30*time.Second, "TestLoad: how long the clients run")
	loadStalled  = flag.Int("load.stalled", 16, "TestLoad: readers that stop reading a large reply, beside the clients")
	loadFlood    = flag.Int("load.flood", 4, "TestLoad: clients of the flooding upstream, beside the clients")
)

// TestLoad runs -load.clients clients for -load.duration of mixed runs,
// steps and reads against a server on loopback with a SQLite store, and
// beside them -load.stalled readers that stop reading an 8 MiB page of events
// or an event stream (reconnecting every few seconds), and -load.flood
// clients of an upstream (a process of its own, stdio) whose calls flood
// progress and log notifications or answer 20 MB, over max_message_bytes.
// It fails on any error other than a deliberate 429 or 503, when the heap
// grows past 512 MiB over its start at any time, and when memory or
// goroutines are not back near their start afterwards; it prints
// requests/s, latency percentiles and the heap. It is not a timed unit
// test: run it with
//
//	go test ./http -run TestLoad -load -v -timeout 10m
func TestLoad(t *testing.T) {
	if !*loadTest {
		t.Skip("a load test: run with go test ./http -run TestLoad -load -v")
	}
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "load.db"))
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, "", func(su *serverSetup) {
		su.store = store
		su.opts.Logger = discardLogger()
	})
	ts.srv.log = discardLogger()
	conns := *loadClients + *loadFlood
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
	defer client.CloseIdleConnections()
	ups := startFlood(t, ts)

	lc := &loadClient{ts: ts, client: client}
	lc.session() // warm up: compile paths, open the store
	big := lc.session()
	appendBlobs(t, ts, big, 150, 64<<10) // 9.6 MB of events: a JSON page of 8 MiB
	heapBefore, goroutinesBefore := settle(client)
	peak := testkit.SampleHeap()

	var wg sync.WaitGroup
	results := make([]loadStats, *loadClients+*loadFlood+*loadStalled)
	deadline := time.Now().Add(*loadDuration)
	start := time.Now()
	for i := range *loadStalled {
		wg.Go(func() { stallReads(ts, big, i%2 == 1, deadline, &results[*loadClients+*loadFlood+i]) })
	}
	for i := range *loadFlood {
		wg.Go(func() {
			c := &loadClient{ts: ts, client: client, stats: &results[*loadClients+i]}
			for n := 0; time.Now().Before(deadline); n++ {
				c.flood(n)
			}
		})
	}
	for i := range results[:*loadClients] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &loadClient{ts: ts, client: client, stats: &results[i]}
			c.sessionID = c.session()
			for n := 0; time.Now().Before(deadline); n++ {
				c.step(i + n)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	heapPeak := peak()

	// Latencies are the clients' (a flooding call takes its upstream's
	// time); errors and statuses, everyone's.
	var all, flood loadStats
	all.statuses = map[int]int{}
	for i, r := range results {
		if i < *loadClients {
			all.latencies = append(all.latencies, r.latencies...)
		} else {
			flood.latencies = append(flood.latencies, r.latencies...)
		}
		all.errors = append(all.errors, r.errors...)
		for k, v := range r.statuses {
			all.statuses[k] += v
		}
	}
	heapAfter, goroutinesAfter := settle(client)
	slices.Sort(all.latencies)
	pct := func(p float64) time.Duration { return all.latencies[int(float64(len(all.latencies)-1)*p)] }
	t.Logf("%d clients, %s: %d requests, %.0f requests/s; latency p50 %s, p99 %s, max %s",
		*loadClients, elapsed.Round(time.Millisecond), len(all.latencies), float64(len(all.latencies))/elapsed.Seconds(),
		pct(0.50), pct(0.99), all.latencies[len(all.latencies)-1])
	var stalls int
	for _, r := range results {
		stalls += r.stalls
	}
	st := ups.States()[0]
	t.Logf("statuses %v; heap %d MiB, at most %d MiB, then %d MiB; goroutines %d → %d",
		all.statuses, heapBefore>>20, heapPeak>>20, heapAfter>>20, goroutinesBefore, goroutinesAfter)
	t.Logf("stalled readers: %d stalls of 5 s; flooding upstream: %d runs, %d progress notifications coalesced away, %d log messages dropped, %d restarts",
		stalls, len(flood.latencies), st.ProgressDropped, st.LogsDropped, st.Restarts)

	if len(all.errors) > 0 {
		t.Errorf("%d errors; the first: %v", len(all.errors), all.errors[:min(5, len(all.errors))])
	}
	if heapPeak > heapBefore+512<<20 {
		t.Errorf("the heap grew from %d MiB to %d MiB under load", heapBefore>>20, heapPeak>>20)
	}
	if heapAfter > max(2*heapBefore, heapBefore+64<<20) {
		t.Errorf("heap did not come back: %d MiB before, %d MiB after", heapBefore>>20, heapAfter>>20)
	}
	if goroutinesAfter > goroutinesBefore+16 {
		t.Errorf("goroutines did not come back: %d before, %d after", goroutinesBefore, goroutinesAfter)
	}
}

// settle drops idle connections, collects garbage and reports the heap in
// use and the goroutine count, less gopool's idle ones, once they are quiet.
func settle(client *http.Client) (heap uint64, goroutines int) {
	client.CloseIdleConnections()
	time.Sleep(200 * time.Millisecond)
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse, runtime.NumGoroutine() - gopool.Idle()
}

type loadStats struct {
	latencies []time.Duration
	statuses  map[int]int
	errors    []error
	stalls    int // stalled reads begun
}

type loadClient struct {
	ts        *testServer
	client    *http.Client
	stats     *loadStats
	sessionID string
	etag      string
	header    http.Header // of the last response
	n         int
}

// call sends one request and checks its status; 429 and 503 are deliberate
// refusals and count as no error. It returns the body on the wanted status.
func (c *loadClient) call(method, path, body string, header map[string]string, want ...int) []byte {
	req, err := http.NewRequest(method, c.ts.url+path, bytes.NewReader([]byte(body)))
	if err != nil {
		panic(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := c.client.Do(req)
	if c.stats == nil {
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return b
		}
		return nil
	}
	if err != nil {
		c.stats.errors = append(c.stats.errors, fmt.Errorf("%s %s: %w", method, path, err))
		return nil
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.header = resp.Header
	c.stats.latencies = append(c.stats.latencies, time.Since(start))
	if c.stats.statuses == nil {
		c.stats.statuses = map[int]int{}
	}
	c.stats.statuses[resp.StatusCode]++
	if err != nil {
		c.stats.errors = append(c.stats.errors, fmt.Errorf("%s %s: read: %w", method, path, err))
		return nil
	}
	if slices.Contains(want, resp.StatusCode) {
		if resp.StatusCode == http.StatusNotModified {
			return []byte{}
		}
		return b
	}
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		c.stats.errors = append(c.stats.errors, fmt.Errorf("%s %s: status %d: %s", method, path, resp.StatusCode, b))
	}
	return nil
}

func (c *loadClient) fail(format string, args ...any) {
	c.stats.errors = append(c.stats.errors, fmt.Errorf(format, args...))
}

func (c *loadClient) session() string {
	b := c.call(http.MethodPost, "/v1/sessions", "", nil, http.StatusCreated)
	var s struct{ ID string }
	_ = json.Unmarshal(b, &s)
	return s.ID
}

// run posts a program and checks is_error and, on success, the result.
func (c *loadClient) run(body string, wantError bool, wantResult string) {
	b := c.call(http.MethodPost, "/v1/run", body, nil, http.StatusOK)
	if b == nil {
		return
	}
	var res runResult
	if err := json.Unmarshal(b, &res); err != nil || res.IsError != wantError {
		c.fail("run %s: %s", body, b)
		return
	}
	if wantResult == "" {
		return
	}
	var v struct{ Result json.RawMessage }
	if json.Unmarshal(res.Value, &v) != nil || string(v.Result) != wantResult {
		c.fail("run %s: result %s, want %s", body, res.Value, wantResult)
	}
}

// step sends the n-th request of the mix.
func (c *loadClient) step(n int) {
	c.n++
	switch n % 8 {
	case 0:
		c.run(`{"code": "const [a, b] = await Promise.all([tools.math_add({a: 2, b: 3}), tools.util_echo({value: 'x'})]); return [a.sum, b.value]"}`, false, `[5,"x"]`)
	case 1:
		c.run(`{"code": "try { await tools.util_fail({message: 'no'}) } catch (e) { return e.message }"}`, false, `"no"`)
	case 2:
		c.run(`{"code": "throw new Error('deliberate')"}`, true, "")
	case 3:
		c.run(`{"code": "return (await tools.util_sleep({ms: 5})).slept_ms"}`, false, `5`)
	case 4:
		body := fmt.Sprintf(`{"tool_calls": [{"id": "m%d", "name": "math_add", "arguments": "{\"a\": 1, \"b\": %d}"}, {"id": "e%d", "name": "util_echo", "arguments": "{\"value\": %d}"}]}`, c.n, c.n, c.n, c.n)
		b := c.call(http.MethodPost, "/v1/sessions/"+c.sessionID+"/steps", body, nil, http.StatusOK)
		if b != nil {
			var s stepResponseJSON
			if json.Unmarshal(b, &s) != nil || len(s.Results) != 2 || s.Results[0].IsError || s.Results[1].IsError {
				c.fail("step: %s", b)
			}
		}
	case 5:
		c.run(fmt.Sprintf(`{"session_id": %q, "code": "await tools.kv_set({key: 'k', value: %d}); return (await tools.kv_get({key: 'k'})).value"}`, c.sessionID, c.n), false, fmt.Sprint(c.n))
	case 6:
		h := map[string]string{}
		if c.etag != "" {
			h["If-None-Match"] = c.etag
		}
		if b := c.call(http.MethodGet, "/v1/sdk?format=ts", "", h, http.StatusOK, http.StatusNotModified); len(b) > 0 {
			c.etag = c.header.Get("ETag") // a full response: revalidate from now on
		}
		c.call(http.MethodGet, "/v1/tools", "", nil, http.StatusOK)
	case 7:
		c.call(http.MethodGet, "/v1/sessions/"+c.sessionID+"/events?after=0&limit=50", "", nil, http.StatusOK)
	}
}
