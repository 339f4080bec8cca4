package worker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
)

// A worker tells the pool which call its program awaits alone, and the pool's reader runs
// that one itself; calls awaited together start elsewhere.
func TestPoolRunsACallAwaitedAloneInline(t *testing.T) {
	pool := newTestPool(t, Options{Warm: -1})
	for _, tc := range []struct {
		name, src, want string
		inline          []bool
	}{
		{"sequential", `let s = 0; for (let i = 1; i <= 3; i++) s += (await tools.t({n: i})).n; return s`, "6", []bool{true, true, true}},
		{"together", `const r = await Promise.all([tools.t({n: 1}), tools.t({n: 2})]); return r[0].n + r[1].n`, "3", []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &sandboxtest.HoldingHost{Handle: sandboxtest.Echo}
			wantValue(t, pool.Run(context.Background(), tc.src, h, sandbox.Options{}), tc.want)
			if got, _ := h.Record(); !slices.Equal(got, tc.inline) {
				t.Fatalf("inline %v, want %v", got, tc.inline)
			}
		})
	}
}

// A call running inline on the reader when the run times out is stopped (its stop context
// ends), so the reader reads the worker's done frame: the run fails with its timeout and the
// worker is kept, not killed for a call that was never the program's doing.
func TestPoolStopsACallRunningInline(t *testing.T) {
	pool := newTestPool(t, Options{Warm: -1, KillGrace: 50 * time.Millisecond})
	h := &sandboxtest.HoldingHost{Handle: func(ctx context.Context, c sandbox.Call, settle func(sandbox.Settlement)) {
		<-ctx.Done()
		time.Sleep(100 * time.Millisecond) // past the kill grace
		settle(sandbox.Settlement{Err: &sandbox.CallError{Message: "stopped"}})
	}}
	res := pool.Run(context.Background(), `return await tools.t({})`, h, sandbox.Options{Timeout: 100 * time.Millisecond})
	wantKind(t, res, sandbox.KindTimeout, "100ms limit")
	if got, _ := h.Record(); len(got) != 1 || !got[0] {
		t.Fatalf("inline %v, want the call run inline", got)
	}
	wantValue(t, pool.Run(context.Background(), `return 1`, nil, sandbox.Options{}), `1`)
	if s := pool.Stats(); s.Killed != 0 || s.Started != 1 {
		t.Fatalf("stats %+v, want the worker kept", s)
	}
}
