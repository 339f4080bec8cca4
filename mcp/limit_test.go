package mcp

import (
	"context"
	"fmt"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode/codemode/config"
)

// TestUpstreamMessageBounds: a reply over max_message_bytes, or nested
// deeper than config.MaxMessageDepth, fails the call it answers at once,
// naming the upstream and the bound, rather than waiting out the call's
// timeout; the connection goes on. Ten such replies at once, of 15 MB
// each, do not take the heap anywhere near their size.
func TestUpstreamMessageBounds(t *testing.T) {
	a := newApp(t)
	s := addServer("up", config.Liveness{})
	s.Timeout = config.Duration(30 * time.Second)
	s.MaxMessageBytes = 1 << 20
	ups, err := startUpstreams(context.Background(), a.Registry, []config.MCPServer{s}, testOptions(discard))
	if err != nil {
		t.Fatal(err)
	}
	defer ups.Close()
	if err := ups.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, args, want string }{
		{"up.big", `{"n":2000000}`, "upstream up sent a reply larger than its max_message_bytes (1048576 bytes)"},
		{"up.deep", fmt.Sprintf(`{"d":%d}`, config.MaxMessageDepth+10), "upstream up sent a reply nested deeper than 512 levels"},
	} {
		start := time.Now()
		res := execute(a, c.tool, c.args)
		if !res.IsError() || !strings.Contains(res.Error().Message, c.want) {
			t.Errorf("%s: %+v, want an error containing %q", c.tool, res.Error(), c.want)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s failed after %v: waited for its timeout", c.tool, d)
		}
	}
	if res := execute(a, "up.big", `{"n":1000}`); res.IsError() {
		t.Errorf("a reply under the bound after the refused ones: %+v", res.Error())
	}

	// The heap while ten 15 MB replies arrive at once, sampled.
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms goruntime.MemStats
		for {
			goruntime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if res := execute(a, "up.big", `{"n":15000000}`); !res.IsError() {
				t.Error("a 15 MB reply over a 1 MiB bound succeeded")
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	if grew := peak.Load() - min(base, peak.Load()); grew > 64<<20 {
		t.Errorf("the heap grew by %d MiB while ten 15 MB replies were refused, want under 64 MiB", grew>>20)
	}
}
