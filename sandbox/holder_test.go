package sandbox_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
)

// runHeld runs the JavaScript program src in process with host h.
func runHeld(t *testing.T, src string, h *sandboxtest.HoldingHost, opts sandbox.Options) sandbox.Result {
	t.Helper()
	p, err := sandbox.Compile(src, sandbox.JavaScript)
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	return sandbox.Run(context.Background(), p, h, opts)
}

// A call the program awaits alone runs inline; calls awaited together, or beside a timer,
// are started elsewhere; every call still settles into the program.
func TestHeldCallsRunInlineOnlyWhenAwaitedAlone(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      string
		inline    []bool
	}{
		{"sequential awaits", `let s = 0; for (let i = 1; i <= 3; i++) s += (await tools.t({n: i})).n; return s`, "6", []bool{true, true, true}},
		{"Promise.all", `const r = await Promise.all([tools.t({n: 1}), tools.t({n: 2})]); return r[0].n + r[1].n`, "3", []bool{false, false}},
		{"beside a timer", `setTimeout(() => {}, 5); return (await tools.t({n: 4})).n`, "4", []bool{false}},
		// Released (started) when the program's last job ends, as it would have started
		// without holding, and never inline.
		{"not awaited", `tools.t({n: 1}); return 7`, "7", []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &sandboxtest.HoldingHost{Handle: sandboxtest.Echo}
			res := runHeld(t, tc.src, h, sandbox.Options{})
			if res.Err != nil || string(res.Value) != tc.want {
				t.Fatalf("result %s %+v, want %s", res.Value, res.Err, tc.want)
			}
			if inline, _ := h.Record(); !slices.Equal(inline, tc.inline) {
				t.Fatalf("inline %v, want %v", inline, tc.inline)
			}
		})
	}
}

// A call made by a job that goes on computing is not held until the job ends: the heap
// watchdog releases it within its interval.
func TestHeldCallsStartWhileTheProgramComputes(t *testing.T) {
	h := &sandboxtest.HoldingHost{Handle: sandboxtest.Echo}
	begin := time.Now()
	res := runHeld(t, `const p = tools.t({n: 1}); const t0 = Date.now(); while (Date.now() - t0 < 300) {} return (await p).n`, h, sandbox.Options{})
	if res.Err != nil || string(res.Value) != "1" {
		t.Fatalf("result %s %+v", res.Value, res.Err)
	}
	inline, started := h.Record()
	if len(started) != 1 || inline[0] {
		t.Fatalf("releases %v", inline)
	}
	if d := started[0].Sub(begin); d > 200*time.Millisecond {
		t.Fatalf("the call started %v after the run began, while the program computed for 300ms: it waited for the job to end", d)
	}
}

// A call running inline is stopped with the run: at the timeout its stop context ends, the
// call returns, and the run fails with its timeout, not abandoned.
func TestInlineCallIsStoppedWithTheRun(t *testing.T) {
	h := &sandboxtest.HoldingHost{Handle: func(ctx context.Context, c sandbox.Call, settle func(sandbox.Settlement)) {
		<-ctx.Done() // an inline call's stop
		settle(sandbox.Settlement{Err: &sandbox.CallError{Message: "stopped"}})
	}}
	start := time.Now()
	res := runHeld(t, `return await tools.t({})`, h, sandbox.Options{Timeout: 100 * time.Millisecond})
	if res.Err == nil || res.Err.Kind != sandbox.KindTimeout || res.Abandoned {
		t.Fatalf("result %+v (abandoned %v), want a timeout, not abandoned", res.Err, res.Abandoned)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the run took %v", d)
	}
	if inline, _ := h.Record(); len(inline) != 1 || !inline[0] {
		t.Fatalf("inline %v, want the call run inline", inline)
	}
}

// A call running inline that ends only after the abandon grace is waited for: the VM
// goroutine is in host code, not stuck in JavaScript, so the run is not abandoned.
func TestSlowInlineCallIsWaitedFor(t *testing.T) {
	h := &sandboxtest.HoldingHost{Handle: func(ctx context.Context, c sandbox.Call, settle func(sandbox.Settlement)) {
		<-ctx.Done()
		time.Sleep(sandbox.AbandonGrace + 100*time.Millisecond) // cleans up slowly
		settle(sandbox.Settlement{Value: []byte("1")})
	}}
	res := runHeld(t, `return await tools.t({})`, h, sandbox.Options{Timeout: 50 * time.Millisecond})
	if res.Err == nil || res.Err.Kind != sandbox.KindTimeout || res.Abandoned {
		t.Fatalf("result %+v (abandoned %v), want a timeout, not abandoned", res.Err, res.Abandoned)
	}
	if !strings.Contains(res.Err.Message, "limit") {
		t.Fatalf("message %q", res.Err.Message)
	}
}
