package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	httpapi "github.com/codemode/codemode/http"
)

// load sends requests made by newReq over conns keep-alive connections for
// d and returns the completed requests per second. Every response must be
// 200 with its body read, and every run must succeed (a failing program
// would measure its error path).
func load(ctx context.Context, client *http.Client, conns int, d time.Duration, newReq func(context.Context) (*http.Request, error)) (float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var done atomic.Int64
	var once sync.Once
	var firstErr error
	fail := func(err error) { once.Do(func() { firstErr = err; cancel() }) }
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(deadline) {
				if err := roundTrip(ctx, client, newReq); err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return 0, firstErr
	}
	return float64(done.Load()) / elapsed.Seconds(), nil
}

// roundTrip sends one request made by newReq and reads its response, which
// must be 200 and, for a run, a success.
func roundTrip(ctx context.Context, client *http.Client, newReq func(context.Context) (*http.Request, error)) error {
	req, err := newReq(ctx)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, body)
	}
	if req.URL.Path == "/v1/run" {
		var res struct {
			IsError *bool `json:"is_error"`
		}
		if err := json.Unmarshal(body, &res); err != nil || res.IsError == nil || *res.IsError {
			return fmt.Errorf("%s %s: the program failed: %s", req.Method, req.URL.Path, body)
		}
	}
	return nil
}

// pairedDelta sends requests of base and of with alternately, one at a time
// on one connection, for d, and returns the median over pairs of with's
// latency minus base's, in µs, and base's latencies (one per pair). Pairing
// cancels what drifts between rounds (the disk's flush time, the host's
// load), which a difference of two rates keeps.
func pairedDelta(ctx context.Context, client *http.Client, d time.Duration, base, with func(context.Context) (*http.Request, error)) (float64, []float64, error) {
	timed := func(newReq func(context.Context) (*http.Request, error)) (float64, error) {
		start := time.Now()
		err := roundTrip(ctx, client, newReq)
		return float64(time.Since(start).Nanoseconds()) / 1e3, err
	}
	var deltas, bases []float64
	for deadline := time.Now().Add(d); time.Now().Before(deadline) || len(deltas) < 10; {
		a, err := timed(base)
		if err != nil {
			return 0, nil, err
		}
		b, err := timed(with)
		if err != nil {
			return 0, nil, err
		}
		deltas, bases = append(deltas, b-a), append(bases, a)
	}
	return median(deltas), bases, nil
}

// server is the real HTTP service over an App, on a loopback listener.
type server struct {
	base string
	stop func()
}

// serve starts httpapi.New over app.New with store and isolation, as
// `codemode serve` does, and returns its base URL.
func serve(ctx context.Context, store, isolation string) (*server, error) {
	ctx, cancel := context.WithCancel(ctx)
	a, err := newApp(ctx, appConfig(store, isolation, true))
	if err != nil {
		cancel()
		return nil, err
	}
	srv, err := httpapi.New(a, httpapi.Options{Logger: discard})
	if err != nil {
		a.Close()
		cancel()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		a.Close()
		cancel()
		return nil, err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	return &server{base: "http://" + ln.Addr().String(), stop: func() {
		cancel()
		<-served
		a.Close()
	}}, nil
}

// httpFigures serves the real HTTP service (httpapi.New over app.New with
// a SQLite store, on a loopback listener) and drives POST /v1/run of the
// trivial program and GET /healthz with the same load generator and the
// same connections, alternating rounds. The same runs against a store on
// tmpfs and in memory split the log's share. Process isolation is measured
// afterwards, against its own healthz rounds, so that its pool's
// background process starts do not slow the other rounds.
func httpFigures(e *env) ([]Row, error) {
	type variant struct{ name, url, isolation string }
	variants := []variant{{"", "sqlite://" + filepath.Join(e.dir, "http.db"), inproc}}
	if e.o.tmpfs != "" {
		dir, err := os.MkdirTemp(e.o.tmpfs, "codemode-bench-")
		if err != nil {
			return nil, fmt.Errorf("-tmpfs: %w", err)
		}
		defer os.RemoveAll(dir)
		variants = append(variants, variant{"SQLite on tmpfs (no fsync)", "sqlite://" + filepath.Join(dir, "http.db"), inproc})
	}
	variants = append(variants, variant{"memory store (no log I/O)", "memory://", inproc})

	var servers []*server
	for _, v := range variants {
		srv, err := serve(e.ctx, v.url, v.isolation)
		if err != nil {
			return nil, err
		}
		defer srv.stop()
		servers = append(servers, srv)
	}
	h := newHTTPLoad(e, servers[0])
	defer h.close()
	rates, err := h.measure(servers...)
	if err != nil {
		return nil, err
	}
	health := rates[0]
	row := Row{Figure: fmt.Sprintf("HTTP POST /v1/run (trivial, in-process, SQLite log), %d conns", e.o.conns), Value: rates[1], Floor: health,
		FloorName: "GET /healthz", Unit: "/s", Target: "≥ 0.25×"}.withRatio()
	rows := []Row{row.judge(row.Ratio >= 0.25)}
	for i := 1; i < len(variants); i++ {
		rows = append(rows, Row{Figure: "  same, " + variants[i].name, Value: rates[i+1], Floor: health,
			FloorName: "GET /healthz", Unit: "/s"}.withRatio())
	}

	const isoFigure = "  same, process isolation (SQLite log)"
	srv, err := serve(e.ctx, "sqlite://"+filepath.Join(e.dir, "http-process.db"), process)
	if err != nil {
		return append(rows, skipped(isoFigure, err.Error())), nil
	}
	defer srv.stop()
	rates, err = h.measure(srv)
	if err != nil {
		return nil, err
	}
	return append(rows, Row{Figure: isoFigure, Value: rates[1], Floor: rates[0], FloorName: "GET /healthz", Unit: "/s"}.withRatio()), nil
}

// httpLoad is the load generator's client and the healthz target.
type httpLoad struct {
	e       *env
	client  *http.Client
	healthz func(context.Context) (*http.Request, error)
}

func newHTTPLoad(e *env, health *server) *httpLoad {
	return &httpLoad{
		e: e,
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConns: 4 * e.o.conns, MaxIdleConnsPerHost: e.o.conns, MaxConnsPerHost: e.o.conns, DisableCompression: true,
		}},
		healthz: func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, health.base+"/healthz", nil)
		},
	}
}

func (h *httpLoad) close() { h.client.CloseIdleConnections() }

// measure returns the median rates of GET /healthz and of POST /v1/run on
// each server, in that order, over rounds that alternate between them
// after a warm-up of each.
func (h *httpLoad) measure(servers ...*server) ([]float64, error) {
	loads := []func(context.Context) (*http.Request, error){h.healthz}
	for _, srv := range servers {
		loads = append(loads, runRequest(srv, `return 1`))
	}
	return h.rates(h.e.o.conns, loads...)
}

// runRequest makes POST /v1/run requests of code on srv.
func runRequest(srv *server, code string) func(context.Context) (*http.Request, error) {
	body := fmt.Sprintf(`{"code": %q}`, code)
	return func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.base+"/v1/run", strings.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
		return req, err
	}
}

// rates returns the median rate of each load over conns connections, over
// rounds that alternate between the loads after a warm-up of each.
func (h *httpLoad) rates(conns int, loads ...func(context.Context) (*http.Request, error)) ([]float64, error) {
	ctx := h.e.ctx
	for _, l := range loads {
		if _, err := load(ctx, h.client, conns, 200*time.Millisecond, l); err != nil {
			return nil, err
		}
	}
	rates := make([][]float64, len(loads))
	for range max(h.e.o.rounds-2, 1) {
		for i, l := range loads {
			r, err := load(ctx, h.client, conns, h.e.o.httpTime, l)
			if err != nil {
				return nil, err
			}
			rates[i] = append(rates[i], r)
		}
	}
	out := make([]float64, len(rates))
	for i, r := range rates {
		out[i] = median(r)
	}
	return out, nil
}
