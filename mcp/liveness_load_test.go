package mcp

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/session"
)

var (
	livenessLoad        = flag.Duration("liveness.load", 0, "run TestLivenessLoad for this long (0: skip)")
	livenessLoadClients = flag.Int("liveness.load.clients", 12, "TestLivenessLoad: MCP clients calling run_code back to back")
	livenessLoadConfig  = flag.String("liveness.load.config", "inproc", "TestLivenessLoad: inproc (isolation inproc, memory store) or default (worker processes, SQLite store)")
)

// TestLivenessLoad is the load of issue 33: MCP clients over HTTP calling
// run_code back to back, each program making 20 sequential calls of an
// upstream's add (the go-sdk on stdio, serveAdd), with the default
// liveness. It reports the longest gap between two completions (the start
// and the end count as completions) and the fewest completions in a
// 10-second window, and fails on a gap over 5s or a failed run.
//
//	go test ./mcp -run TestLivenessLoad -liveness.load=3m -liveness.load.config=default
func TestLivenessLoad(t *testing.T) {
	if *livenessLoad <= 0 {
		t.Skip("set -liveness.load")
	}
	ctx := context.Background()
	cfg := config.Default()
	opts := app.Options{Logger: discard}
	switch *livenessLoadConfig {
	case "inproc":
		cfg.Isolation = "inproc"
		opts.Store = session.NewMemory()
	case "default":
		cfg.Store = "sqlite://" + filepath.Join(t.TempDir(), "codemode.db")
	default:
		t.Fatalf("-liveness.load.config %q", *livenessLoadConfig)
	}
	a, err := app.New(ctx, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ups, err := StartUpstreams(ctx, a, []config.MCPServer{addServer("up", config.Liveness{})}, UpstreamOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer ups.Close()
	if err := ups.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	h := Handler(a, HandlerOptions{Logger: discard, Upstreams: ups})
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); h.Close() }()

	const program = `let s = 0; for (let i = 0; i < 20; i++) { s = (await tools["up.add"]({a: s, b: 1})).sum } return s`
	start := time.Now()
	end := start.Add(*livenessLoad)
	var mu sync.Mutex
	done := []time.Time{start}
	var failures []string
	var wg sync.WaitGroup
	for c := range *livenessLoadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: fmt.Sprintf("load-%d", c), Version: "1"}, &sdk.ClientOptions{Logger: discard}).
				Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer cs.Close()
			for time.Now().Before(end) {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": program, "description": "adds"}})
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, err.Error())
				case res.IsError || text(res) != "20":
					failures = append(failures, text(res))
				default:
					done = append(done, time.Now())
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	done = append(done, time.Now())
	slices.SortFunc(done, func(a, b time.Time) int { return a.Compare(b) })

	var gap time.Duration
	var gapAt time.Duration
	for i := 1; i < len(done); i++ {
		if d := done[i].Sub(done[i-1]); d > gap {
			gap, gapAt = d, done[i-1].Sub(start)
		}
	}
	fewest, windows := -1, 0
	for w := start; w.Add(10 * time.Second).Before(done[len(done)-1]); w = w.Add(10 * time.Second) {
		n := 0
		for _, at := range done[1 : len(done)-1] {
			if !at.Before(w) && at.Before(w.Add(10*time.Second)) {
				n++
			}
		}
		if fewest < 0 || n < fewest {
			fewest = n
		}
		windows++
	}
	st := ups.States()[0]
	t.Logf("config %s, %d clients, %v: %d runs completed, %d failed; longest gap between completions %v (at %v); fewest completions in a 10s window %d of %d windows; upstream restarts %d, unresponsive %d, stalled calls %d",
		*livenessLoadConfig, *livenessLoadClients, time.Since(start).Round(time.Second), len(done)-2, len(failures),
		gap.Round(time.Millisecond), gapAt.Round(time.Second), fewest, windows, st.Restarts, st.Unresponsive, st.StalledCalls)
	if len(failures) > 0 {
		t.Errorf("%d runs failed, the first: %s", len(failures), failures[0])
	}
	if gap > 5*time.Second {
		t.Errorf("completions stopped for %v", gap)
	}
}
