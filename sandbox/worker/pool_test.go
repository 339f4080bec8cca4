package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
)

// asyncHost has three tools, settled on other goroutines as the bridge does: add sums,
// fail rejects, echo returns its argument.
type asyncHost struct{}

func (asyncHost) Has(n string) bool { return slices.Contains(asyncHost{}.Names(), n) }
func (asyncHost) Names() []string   { return []string{"add", "echo", "fail"} }
func (asyncHost) Call(c sandbox.Call, settle func(sandbox.Settlement)) {
	go func() {
		switch c.Name {
		case "add":
			var in struct{ A, B float64 }
			_ = json.Unmarshal(c.Args, &in)
			settle(sandbox.Settlement{Value: []byte(fmt.Sprintf(`{"sum":%g}`, in.A+in.B))})
		case "echo":
			settle(sandbox.Settlement{Value: c.Args})
		case sandbox.SearchName, sandbox.DescribeName: // the catalog's members: say what arrived
			settle(sandbox.Settlement{Value: []byte(fmt.Sprintf(`{"member":%q,"args":%s}`, c.Name, c.Args))})
		default:
			settle(sandbox.Settlement{Err: &sandbox.CallError{Message: "it failed"}})
		}
	}()
}

// TestPoolMatchesInProcess runs programs in process and in a worker: the results are the
// same, logs, values and failures alike.
func TestPoolMatchesInProcess(t *testing.T) {
	pool := newTestPool(t, Options{})
	programs := []string{
		`return {s: "text", n: -0, big: 1e21, t: true, z: null, a: [1, [2]], u: "\u00e9\u2028"}`,
		`return "lone \ud800 surrogate"`,
		`console.log("a", {b: [1, 2]}, 3n); console.error("e"); return undefined`,
		`const x: number = (await tools.add({a: 1, b: 2})).sum; return x`,
		`return await Promise.all([1, 2, 3].map((i) => tools.add({a: i, b: i})))`,
		`try { await tools.fail({}) } catch (e) { return [e.name, e.toolName, e.message, e instanceof ToolCallError] }`,
		`try { await tools.add({a: 1n}) } catch (e) { return e.message }`,
		`return [Object.keys(tools), typeof tools.nope, "add" in tools]`,
		`return (await tools.echo({deep: {er: [1, "x", null]}}))`,
		`return [await tools.$search("open PRs", {limit: 2}), await tools.$describe(["add"]), await tools.$search(), "$search" in tools]`,
		`try { await tools.$search("a", {}, 3) } catch (e) { return [e.code, e.message] }`,
		`let a = []; for (let i = 1; i < 10000; i++) a = [a]; return a`,
		`let a = []; for (let i = 1; i < 9999; i++) a = [a]; return (await tools.echo({a})).a.length`,
		`await tools.fail({})`,
		`throw new TypeError("bad " + 1)`,
		"const a = 1;\nconst b = ;",
		`const x: = 2`,
		`await new Promise(() => {})`,
		`await new Promise((r) => setTimeout(r, 5)); return "timer"`,
		`for (let i = 0; i < 2000; i++) await tools.add({a: i, b: 0})`,
		`return "x".repeat(1 << 21)`,
		`for (;;) console.log("line")`,
		`function f() { return f() } f()`,
		`const v = "x".repeat(100000); for (let i = 0; i < 20; i++) await tools.echo({v}); return "passed"`,
	}
	for i, src := range programs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			opts := sandbox.Options{Timeout: 10 * time.Second, MaxLogBytes: 64 << 10, MaxResultBytes: 1 << 20, MaxCallBytes: 1 << 20}
			want := sandbox.InProcess{}.Run(context.Background(), src, asyncHost{}, opts)
			got := pool.Run(context.Background(), src, asyncHost{}, opts)
			if !sameResult(got, want) {
				t.Fatalf("in a worker: %s\nin process:  %s", describeResult(got), describeResult(want))
			}
		})
	}
}

func sameResult(a, b sandbox.Result) bool {
	return slices.Equal(a.Logs, b.Logs) && string(a.Value) == string(b.Value) && fmt.Sprint(a.Err) == fmt.Sprint(b.Err)
}

func describeResult(r sandbox.Result) string {
	return fmt.Sprintf("value %s, err %v, %d log lines %q", r.Value, r.Err, len(r.Logs), r.Logs[:min(len(r.Logs), 3)])
}

func TestPoolTimeoutKeepsTheWorker(t *testing.T) {
	pool := newTestPool(t, Options{Warm: -1})
	res := pool.Run(context.Background(), `for (;;) {}`, nil, sandbox.Options{Timeout: 100 * time.Millisecond})
	wantKind(t, res, sandbox.KindTimeout, "ran longer than its 100ms limit")
	wantValue(t, pool.Run(context.Background(), `return 1`, nil, sandbox.Options{}), `1`)
	if s := pool.Stats(); s.Started != 1 || s.Killed != 0 {
		t.Fatalf("an interruptible loop cost a worker: %+v", s)
	}
}

func TestPoolKillsAWorkerThatDoesNotStop(t *testing.T) {
	// A catastrophic regexp2 match ignores Interrupt for a second; the grace is shorter.
	pool := newTestPool(t, Options{Warm: -1, KillGrace: 20 * time.Millisecond})
	start := time.Now()
	res := pool.Run(context.Background(), `for (;;) /^(a+)+\1b$/.test("a".repeat(40))`, nil, sandbox.Options{Timeout: 100 * time.Millisecond})
	wantKind(t, res, sandbox.KindTimeout, "100ms limit")
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("the run took %v to end: the kill did not cut the stuck match short", elapsed)
	}
	wantValue(t, pool.Run(context.Background(), `return 2`, nil, sandbox.Options{}), `2`)
	testkit.Eventually(t, "the kill to be recorded", func() bool { return pool.Stats().Killed == 1 })
	if s := pool.Stats(); s.Killed != 1 || s.Started != 2 {
		t.Fatalf("stats %+v, want one worker killed and one started in its place", s)
	}
}

func TestPoolRetiresAnAbandonedWorker(t *testing.T) {
	// With the default grace the worker answers, reporting its VM goroutine stuck: it is
	// retired rather than reused.
	pool := newTestPool(t, Options{Warm: -1})
	res := pool.Run(context.Background(), `for (;;) /^(a+)+\1b$/.test("a".repeat(40))`, nil, sandbox.Options{Timeout: 50 * time.Millisecond})
	wantKind(t, res, sandbox.KindTimeout)
	if s := pool.Stats(); s.Retired != 1 || s.Killed != 0 {
		t.Fatalf("stats %+v, want the worker retired", s)
	}
}

func TestPoolCancel(t *testing.T) {
	pool := newTestPool(t, Options{Warm: -1})
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("the client went away")) })
	res := pool.Run(ctx, `for (;;) {}`, nil, sandbox.Options{})
	wantKind(t, res, sandbox.KindCancelled, "the run was cancelled: the client went away")

	res = pool.Run(ctx, `return 1`, nil, sandbox.Options{})
	wantKind(t, res, sandbox.KindCancelled)
	if s := pool.Stats(); s.Started != 1 {
		t.Fatalf("stats %+v: a cancelled context started a worker, or cancelling cost one", s)
	}
}

func TestPoolWorkerDeaths(t *testing.T) {
	tests := []struct {
		name, src string
		opts      Options
		kind      string
		message   string
	}{
		{"stack", `eval("[".repeat(200000) + "]".repeat(200000))`, Options{MaxStack: 16 << 20}, sandbox.KindLimit, "exceeded the worker's stack limit of 16 MiB"},
		{"allocation beyond the machine", `new globalThis["Array" + "Buffer"](2 ** 40)`, Options{}, sandbox.KindLimit, "exceeded its memory limit of 512 MiB: its worker process ran out of memory"},
		{"hard cap", `new globalThis["Uint8" + "Array"](512 << 20).fill(1)`, Options{Memory: 64 << 20, HardMemory: 256 << 20}, sandbox.KindLimit, "memory limit of 64 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.HardMemory > 0 && raceEnabled {
				t.Skip("a worker built with the race detector has no hard memory cap")
			}
			tt.opts.Warm = -1
			pool := newTestPool(t, tt.opts)
			res := pool.Run(context.Background(), tt.src, nil, sandbox.Options{Timeout: 30 * time.Second})
			wantKind(t, res, tt.kind, tt.message)
			wantValue(t, pool.Run(context.Background(), `return "replaced"`, nil, sandbox.Options{}), `"replaced"`)
			if s := pool.Stats(); s.Started != 2 {
				t.Fatalf("stats %+v, want a second worker", s)
			}
		})
	}
}

func TestPoolReportsSignals(t *testing.T) {
	tests := []struct {
		sig     syscall.Signal
		kind    string
		message string
	}{
		{syscall.SIGKILL, sandbox.KindLimit, "killed from outside"},
		{syscall.SIGTERM, sandbox.KindRuntime, "the worker process died (signal: terminated) and was replaced"},
	}
	for _, tt := range tests {
		t.Run(tt.sig.String(), func(t *testing.T) {
			pool := newTestPool(t, Options{Warm: -1})
			wantValue(t, pool.Run(context.Background(), `return 0`, nil, sandbox.Options{}), `0`)
			pid := onlyWorker(t, pool).pid
			time.AfterFunc(200*time.Millisecond, func() { syscall.Kill(pid, tt.sig) })
			res := pool.Run(context.Background(), `for (;;) {}`, nil, sandbox.Options{Timeout: 20 * time.Second})
			wantKind(t, res, tt.kind, tt.message)
			// The run's failure can reach the caller a moment before the
			// reader goroutine records the death in the counters.
			testkit.Eventually(t, "one recorded death", func() bool { return pool.Stats().Died == 1 })
		})
	}
}

func TestPoolRecycles(t *testing.T) {
	t.Run("after MaxRuns", func(t *testing.T) {
		pool := newTestPool(t, Options{Warm: -1, MaxRuns: 2})
		for range 5 {
			wantValue(t, pool.Run(context.Background(), `return 1`, nil, sandbox.Options{}), `1`)
		}
		if s := pool.Stats(); s.Started != 3 || s.Retired != 2 {
			t.Fatalf("stats %+v, want workers of 2, 2 and 1 runs", s)
		}
	})
	t.Run("past RecycleMemory", func(t *testing.T) {
		pool := newTestPool(t, Options{Warm: -1, RecycleMemory: 1})
		for range 2 {
			wantValue(t, pool.Run(context.Background(), `return 1`, nil, sandbox.Options{}), `1`)
		}
		if s := pool.Stats(); s.Started != 2 || s.Retired != 2 {
			t.Fatalf("stats %+v, want every worker retired after its run", s)
		}
	})
}

func TestPoolKeepsWarmWorkers(t *testing.T) {
	pool := newTestPool(t, Options{Warm: 2})
	if s := pool.Stats(); s.Started != 0 {
		t.Fatalf("a new pool started %d workers", s.Started)
	}
	wantValue(t, pool.Run(context.Background(), `return 1`, nil, sandbox.Options{}), `1`)
	testkit.Eventually(t, "the warm workers to start", func() bool { return pool.Stats().Idle == 3 })
}

func TestPoolWaitsForAFreeWorker(t *testing.T) {
	pool := newTestPool(t, Options{Warm: -1, MaxWorkers: 1})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pool.Run(context.Background(), `await new Promise((r) => setTimeout(r, 300))`, nil, sandbox.Options{})
	}()
	testkit.Eventually(t, "the first run to start", func() bool { return pool.Stats().Busy == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	wantKind(t, pool.Run(ctx, `return 1`, nil, sandbox.Options{}), sandbox.KindCancelled)
	wantValue(t, pool.Run(context.Background(), `return 2`, nil, sandbox.Options{}), `2`)
	wg.Wait()
}

func TestPoolClose(t *testing.T) {
	pool := newTestPool(t, Options{Warm: 2})
	wantValue(t, pool.Run(context.Background(), `return 1`, nil, sandbox.Options{}), `1`)
	testkit.Eventually(t, "the warm workers", func() bool { return pool.Stats().Idle == 3 })
	var pids []int
	pool.mu.Lock()
	for w := range pool.all {
		pids = append(pids, w.pid)
	}
	pool.mu.Unlock()

	done := make(chan sandbox.Result)
	go func() {
		done <- pool.Run(context.Background(), `for (;;) {}`, nil, sandbox.Options{Timeout: time.Minute})
	}()
	testkit.Eventually(t, "the run to start", func() bool { return pool.Stats().Busy == 1 })
	pool.Close()
	wantKind(t, <-done, sandbox.KindRuntime, "the worker pool was closed")
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("worker %d still exists after Close (%v)", pid, err)
		}
	}
	wantKind(t, pool.Run(context.Background(), `return 1`, nil, sandbox.Options{}), sandbox.KindRuntime, ErrClosed.Error())
}

// lateHost settles after the run has ended, panics, or answers with something that is not
// JSON.
type lateHost struct{ late chan struct{} }

func (lateHost) Has(n string) bool { return n == "late" || n == "panics" || n == "garbage" }
func (lateHost) Names() []string   { return []string{"garbage", "late", "panics"} }
func (h lateHost) Call(c sandbox.Call, settle func(sandbox.Settlement)) {
	switch c.Name {
	case "panics":
		panic("the host exploded")
	case "garbage":
		settle(sandbox.Settlement{Value: []byte(`{not json`)})
	default:
		go func() {
			<-h.late
			settle(sandbox.Settlement{Value: []byte(`1`)})
			settle(sandbox.Settlement{Value: []byte(`2`)})
		}()
	}
}

func TestPoolHostEdgeCases(t *testing.T) {
	pool := newTestPool(t, Options{Warm: -1, MaxWorkers: 1})
	h := lateHost{late: make(chan struct{})}
	res := pool.Run(context.Background(), `
		const out = [];
		for (const name of ["panics", "garbage"]) {
			try { await tools[name]({}) } catch (e) { out.push(e.message) }
		}
		tools.late({});
		return out`, h, sandbox.Options{})
	wantValue(t, res, `["internal error: dispatching the call panicked: the host exploded","the tool's value is not valid JSON"]`)
	close(h.late) // settles a call of a run that has ended: dropped
	wantValue(t, pool.Run(context.Background(), `return 3`, nil, sandbox.Options{}), `3`)
}

func TestPoolSendsToolNamesOnce(t *testing.T) {
	pool := newTestPool(t, Options{Warm: -1, MaxWorkers: 1})
	for i, host := range []sandbox.Host{asyncHost{}, sandboxtest.Host{}, asyncHost{}, nil} {
		want := map[int]string{0: `["add","echo","fail"]`, 1: `["math_add"]`, 2: `["add","echo","fail"]`, 3: `[]`}[i]
		wantValue(t, pool.Run(context.Background(), `return Object.keys(tools)`, host, sandbox.Options{}), want)
	}
}

func TestPoolEnvironment(t *testing.T) {
	t.Setenv("CODEMODE_TEST_SECRET", "hunter2")
	t.Setenv("GOGC", "150")
	pool := newTestPool(t, Options{Env: []string{"EXTRA=1"}})
	env := strings.Join(pool.env, "\n")
	if strings.Contains(env, "hunter2") || !strings.Contains(env, "GOGC=150") || !strings.Contains(env, "EXTRA=1") || !strings.Contains(env, EnvVar+"=") {
		t.Fatalf("worker environment:\n%s", env)
	}
}

func TestServeProtocolErrors(t *testing.T) {
	run := `{"t":"run","run":1,"source":"await new Promise(r => setTimeout(r, 200))","options":{}}`
	tests := []struct {
		name, input, want string
	}{
		{"end of input", "", ""},
		{"a second run while one is in progress", run + "\n" + strings.Replace(run, `"run":1`, `"run":2`, 1), "run 2 started while run 1 is in progress"},
		{"a frame only a worker sends", `{"t":"done","run":1,"result":{}}`, `unexpected "done" frame`},
		{"a run as deep as data may be", `{"t":"run","run":1,"source":"let a = []; for (let i = 1; i < 10000; i++) a = [a]; return a","options":{}}`, ""},
		{"garbage", "not json", "decode frame"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in []byte
			for _, l := range strings.Split(tt.input, "\n") {
				if l != "" {
					in = append(in, frame(l)...)
				}
			}
			err := serve(strings.NewReader(string(in)), io.Discard, "test", 0)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("serve: %v, want %q", err, tt.want)
			}
		})
	}
}

func onlyWorker(t *testing.T, p *Pool) *process {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.all) != 1 {
		t.Fatalf("%d workers, want 1", len(p.all))
	}
	for w := range p.all {
		return w
	}
	return nil
}

func wantKind(t *testing.T, res sandbox.Result, kind string, fragments ...string) {
	t.Helper()
	if res.Err == nil {
		t.Fatalf("succeeded with %s, want a %s failure", res.Value, kind)
	}
	if res.Err.Kind != kind {
		t.Fatalf("failure %v, want kind %s", res.Err, kind)
	}
	for _, f := range fragments {
		if !strings.Contains(res.Err.Message, f) {
			t.Fatalf("failure %q does not mention %q", res.Err.Message, f)
		}
	}
}

func wantValue(t *testing.T, res sandbox.Result, want string) {
	t.Helper()
	if res.Err != nil || string(res.Value) != want {
		t.Fatalf("got %s (%v), want %s", res.Value, res.Err, want)
	}
}

// keyedHost is a Host whose names carry a key, counting how often they are listed.
type keyedHost struct {
	sandboxtest.Host
	key   uint64
	lists atomic.Int32
}

func (h *keyedHost) Names() []string  { h.lists.Add(1); return h.Host.Names() }
func (h *keyedHost) NamesKey() uint64 { return h.key }

// A host that keys its names has them listed once per worker, not once per run.
func TestKeyedNamesAreSentOnce(t *testing.T) {
	pool := newTestPool(t, Options{Warm: -1, MaxWorkers: 1})
	h := &keyedHost{key: 7}
	for i := 0; i < 5; i++ {
		res := pool.Run(context.Background(), `return Object.keys(tools).length + (await tools.math_add({a: 1, b: 2})).sum`, h, sandbox.Options{})
		if res.Err != nil || string(res.Value) != "4" {
			t.Fatalf("run %d: %+v", i, res)
		}
	}
	if n := h.lists.Load(); n != 1 {
		t.Fatalf("names listed %d times for 5 runs on one worker", n)
	}
}

// A worker is not retired as surplus while a run waits for one: with MaxIdle 1 and two
// workers busy, the second to finish goes to the run that waits instead of dying.
func TestNoRetirementWhileRunsWait(t *testing.T) {
	pool := newTestPool(t, Options{Warm: -1, MaxWorkers: 2, MaxIdle: 1})
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res := pool.Run(context.Background(), `await new Promise(r => setTimeout(r, 30)); return 1`, nil, sandbox.Options{}); res.Err != nil {
				t.Error(res.Err)
			}
		}()
	}
	wg.Wait()
	if s := pool.Stats(); s.Started != 2 {
		t.Fatalf("6 runs on 2 workers started %d workers (retired %d)", s.Started, s.Retired)
	}
}

// Both sides spin awaiting a frame only while at most SpinRuns runs are in progress (the
// flag crosses in run and settle frames) and a run is active (for the pool, once it has made a
// call); a pool that never spins runs programs alike.
func TestPoolSpinsWhileFewRunsShareTheCPUs(t *testing.T) {
	if got, want := (Options{}).withDefaults().SpinRuns, max(runtime.GOMAXPROCS(0)/2, 1); got != want {
		t.Errorf("default SpinRuns %d, want %d", got, want)
	}
	pool := newTestPool(t, Options{Warm: -1, SpinRuns: 2})
	for running, want := range map[int32]bool{0: true, 1: true, 2: true, 3: false} {
		pool.running.Store(running)
		if pool.spinOK() != want {
			t.Errorf("SpinRuns 2, %d runs: spinOK %v", running, !want)
		}
	}
	pool.running.Store(0)
	never := newTestPool(t, Options{Warm: -1, SpinRuns: -1})
	if never.spinOK() {
		t.Error("SpinRuns -1: spinOK")
	}
	const code = "let s = 0; for (let i = 0; i < 20; i++) s += (await tools.math_add({a: i, b: 2})).sum; return s"
	for _, p := range []*Pool{pool, never} {
		wantValue(t, p.Run(context.Background(), code, sandboxtest.Host{}, sandbox.Options{}), "230")
	}

	// The pool's reader spins once the run has made a call (before it the worker is starting
	// the run, longer than a spin); the worker's while its run is active.
	allowed := true
	w := &process{spinOK: func() bool { return allowed }}
	for _, c := range []struct {
		allowed, running, called, want bool
	}{{true, true, true, true}, {true, true, false, false}, {true, false, false, false}, {false, true, true, false}} {
		allowed, w.cur = c.allowed, nil
		if c.running {
			w.cur = &procRun{called: c.called}
		}
		if w.awaiting() != c.want {
			t.Errorf("pool: spin allowed %v, run %v, called %v: awaiting %v", c.allowed, c.running, c.called, !c.want)
		}
	}
	var s server
	for _, c := range []struct {
		spin, active, want bool
	}{{true, true, true}, {false, true, false}, {true, false, false}} {
		s.spin, s.active = c.spin, nil
		if c.active {
			s.active = &workerRun{}
		}
		if s.awaiting() != c.want {
			t.Errorf("worker: spin allowed %v, run active %v: awaiting %v", c.spin, c.active, !c.want)
		}
	}
}

// A worker bounds its compiled-program cache well within the memory its runs share, and
// says so when it starts.
func TestWorkersBoundTheirProgramCache(t *testing.T) {
	var buf testkit.Logs
	p := newTestPool(t, Options{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	wantValue(t, p.Run(context.Background(), "return 1", sandboxtest.Host{}, sandbox.Options{}), "1")
	want := fmt.Sprintf("program cache %d", programCacheBytes)
	if !strings.Contains(buf.String(), want) {
		t.Fatalf("no worker said %q:\n%s", want, buf.String())
	}
	if programCacheBytes > softAllowance/2 {
		t.Fatalf("a worker's program cache (%d) may take more than half its allowance beyond the runs' memory (%d)", programCacheBytes, softAllowance)
	}
}

// A worker keeps a floor under its collector's heap goal, unless GOGC reaches it, and says
// which when it starts.
func TestWorkersKeepAGCFloor(t *testing.T) {
	started := func(env ...string) string {
		var buf testkit.Logs
		p := newTestPool(t, Options{Env: env, Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		wantValue(t, p.Run(context.Background(), "return 1", sandboxtest.Host{}, sandbox.Options{}), "1")
		return buf.String()
	}
	want := fmt.Sprintf("gc floor %d", gcFloor)
	if v, ok := os.LookupEnv("GOGC"); ok {
		want = "GOGC=" + v // inherited: the operator's choice
	}
	if out := started(); !strings.Contains(out, want) {
		t.Fatalf("no worker said %q:\n%s", want, out)
	}
	if out := started("GOGC=150"); !strings.Contains(out, "GOGC=150") || strings.Contains(out, "gc floor") {
		t.Fatalf("with GOGC=150 a worker said:\n%s", out)
	}
}
