package sandbox

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// holdingHost is a Holder over fakeHost-like calls: it keeps every call until Release, then
// runs each with handle, on the releasing goroutine when Release may run it inline, on a new
// goroutine otherwise. It records whether each call ran inline and when it started.
type holdingHost struct {
	names  []string
	handle func(ctx context.Context, c Call, settle func(Settlement))

	mu      sync.Mutex
	holding bool
	held    []heldCall
	inline  []bool      // whether each call ran inline
	started []time.Time // when each call started
}

type heldCall struct {
	c      Call
	settle func(Settlement)
}

func (h *holdingHost) Has(name string) bool { return true }
func (h *holdingHost) Names() []string      { return h.names }
func (h *holdingHost) Hold()                { h.mu.Lock(); h.holding = true; h.mu.Unlock() }

func (h *holdingHost) Call(c Call, settle func(Settlement)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.holding {
		panic("a call before Hold")
	}
	h.held = append(h.held, heldCall{c, settle})
}

func (h *holdingHost) Release(alone bool, stop context.Context) bool {
	h.mu.Lock()
	held := h.held
	h.held = nil
	inline := alone && len(held) == 1
	for range held {
		h.inline = append(h.inline, inline)
		h.started = append(h.started, time.Now())
	}
	h.mu.Unlock()
	if inline {
		h.handle(stop, held[0].c, held[0].settle)
		return true
	}
	for _, hc := range held {
		go h.handle(context.Background(), hc.c, hc.settle)
	}
	return false
}

func (h *holdingHost) record() (inline []bool, started []time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]bool(nil), h.inline...), append([]time.Time(nil), h.started...)
}

func echo(_ context.Context, c Call, settle func(Settlement)) {
	settle(Settlement{Value: c.Args})
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
			h := &holdingHost{names: []string{"t"}, handle: echo}
			res := runJS(t, tc.src, h)
			if res.Err != nil || string(res.Value) != tc.want {
				t.Fatalf("result %s %+v, want %s", res.Value, res.Err, tc.want)
			}
			inline, _ := h.record()
			if len(inline) != len(tc.inline) {
				t.Fatalf("inline %v, want %v", inline, tc.inline)
			}
			for i := range inline {
				if inline[i] != tc.inline[i] {
					t.Fatalf("inline %v, want %v", inline, tc.inline)
				}
			}
		})
	}
}

// A call made by a job that goes on computing is not held until the job ends: the heap
// watchdog releases it within its interval.
func TestHeldCallsStartWhileTheProgramComputes(t *testing.T) {
	h := &holdingHost{names: []string{"t"}, handle: echo}
	begin := time.Now()
	res := runJS(t, `const p = tools.t({n: 1}); const t0 = Date.now(); while (Date.now() - t0 < 300) {} return (await p).n`, h)
	if res.Err != nil || string(res.Value) != "1" {
		t.Fatalf("result %s %+v", res.Value, res.Err)
	}
	inline, started := h.record()
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
	h := &holdingHost{names: []string{"t"}, handle: func(ctx context.Context, c Call, settle func(Settlement)) {
		<-ctx.Done() // an inline call's stop
		settle(Settlement{Err: &CallError{Message: "stopped"}})
	}}
	start := time.Now()
	res := runLang(t, `return await tools.t({})`, JavaScript, h, Options{Timeout: 100 * time.Millisecond})
	if res.Err == nil || res.Err.Kind != KindTimeout || res.Abandoned {
		t.Fatalf("result %+v (abandoned %v), want a timeout, not abandoned", res.Err, res.Abandoned)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the run took %v", d)
	}
	if inline, _ := h.record(); len(inline) != 1 || !inline[0] {
		t.Fatalf("inline %v, want the call run inline", inline)
	}
}

// A call running inline that ends only after the abandon grace is waited for: the VM
// goroutine is in host code, not stuck in JavaScript, so the run is not abandoned.
func TestSlowInlineCallIsWaitedFor(t *testing.T) {
	h := &holdingHost{names: []string{"t"}, handle: func(ctx context.Context, c Call, settle func(Settlement)) {
		<-ctx.Done()
		time.Sleep(abandonGrace + 100*time.Millisecond) // cleans up slowly
		settle(Settlement{Value: []byte("1")})
	}}
	res := runLang(t, `return await tools.t({})`, JavaScript, h, Options{Timeout: 50 * time.Millisecond})
	if res.Err == nil || res.Err.Kind != KindTimeout || res.Abandoned {
		t.Fatalf("result %+v (abandoned %v), want a timeout, not abandoned", res.Err, res.Abandoned)
	}
	if !strings.Contains(res.Err.Message, "limit") {
		t.Fatalf("message %q", res.Err.Message)
	}
}
