package bridge_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/worker"
)

// Promise.race over tool calls answers with the call whose body ended first,
// even when an earlier-submitted call is still running.
func TestRaceAnswersWithTheFirstCallToFinish(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	g := newGate("slow", "fast")
	e.tool("gate", true, g.body)
	done := make(chan *runtime.Result)
	go func() {
		done <- e.run(context.Background(), `
			return await Promise.race([
				tools.gate({id: "slow"}).then(() => "slow"),
				tools.gate({id: "fast"}).then(() => "fast"),
			])`)
	}()
	g.waitRunning(t, "slow", "fast")
	close(g.release["fast"])
	// The program settles with "fast" while "slow" still runs: the run then
	// cancels it.
	if _, got := value(t, <-done); got != `"fast"` {
		t.Fatalf("race = %s, want \"fast\"", got)
	}
}

// A per-call time budget with Promise.race reports a call as timed out only
// when it really is slower than the budget.
func TestPerCallBudgetWithRace(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("sleep", true, sleepBody)
	_, result := value(t, e.run(context.Background(), `
		const budget = (p, ms) => Promise.race([p.then(() => "ok"), new Promise(r => setTimeout(() => r("timeout"), ms))])
		return await Promise.all([
			budget(tools.sleep({ms: 1000}), 300),
			budget(tools.sleep({ms: 0}), 300),
			budget(tools.sleep({ms: 5}), 300),
		])`))
	if result != `["timeout","ok","ok"]` {
		t.Fatalf("budgets = %s", result)
	}
}

func sleepBody(ctx context.Context, _ registry.Exec, args frozen.Value) (any, error) {
	var in struct{ Ms int }
	_ = args.Unmarshal(&in)
	select {
	case <-time.After(time.Duration(in.Ms) * time.Millisecond):
		return in.Ms, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// causalProgram mixes overlapping safe calls with an exclusive one; every
// promise pushes its label when it resolves.
const causalProgram = `
	const order = []
	const label = (p, l) => p.then(() => order.push(l))
	await Promise.all([
		label(tools.sleep({ms: 2}), "sleep"),
		label(tools.set({}), "set"),
		label(tools.echo({}), "echo"),
		...[0, 1, 2, 3, 4, 5].map(i => label(tools.sleep({ms: i % 3}), "s" + i)),
	])
	return order`

// Promises resolve in the order their calls settled, every time: the
// exclusive call waits for the sleep and the echo waits for it, so "sleep",
// "set", "echo" come in that order; and for every call the order the program
// saw is exactly the order of the settlement events in the log.
func TestPromisesResolveInSettlementOrder(t *testing.T) {
	runs := 200
	if testing.Short() {
		runs = 30
	}
	t.Run("in-process", func(t *testing.T) { checkCausalOrder(t, bridge.Options{}, runs) })
	t.Run("worker", func(t *testing.T) {
		pool, err := worker.New(worker.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pool.Close() })
		checkCausalOrder(t, bridge.Options{Runner: pool}, runs/2)
	})
}

func checkCausalOrder(t *testing.T, opts bridge.Options, runs int) {
	for i := 0; i < runs; i++ {
		e := newEnv(t, opts)
		e.tool("sleep", true, sleepBody)
		e.tool("set", false, echo)
		e.tool("echo", true, echo)
		_, result := value(t, e.run(context.Background(), causalProgram))
		var order []string
		if err := json.Unmarshal([]byte(result), &order); err != nil {
			t.Fatal(err)
		}
		pos := map[string]int{}
		for i, l := range order {
			pos[l] = i
		}
		if !(pos["sleep"] < pos["set"] && pos["set"] < pos["echo"]) {
			t.Fatalf("run %d: the program saw %v: an exclusive call's neighbours resolved out of causal order", i, order)
		}
		// Labels by sub-call number: 1 sleep, 2 set, 3 echo, 4.. s0..s5.
		labels := []string{"sleep", "set", "echo", "s0", "s1", "s2", "s3", "s4", "s5"}
		var logged []string
		for _, ev := range e.sink.ends {
			logged = append(logged, labels[ev.Number-1])
		}
		if strings.Join(logged, ",") != strings.Join(order, ",") {
			t.Fatalf("run %d: settlements logged %v, program saw %v", i, logged, order)
		}
	}
}

// A call the program awaits alone (which runs on the program's own goroutine) ends with the
// run: at the run's timeout, and when the caller cancels, the call is cancelled at once, its
// settlement is logged before run_code returns, and the run fails as it would with the call
// anywhere else.
func TestAnAwaitedCallEndsWithTheRun(t *testing.T) {
	pool, err := worker.New(worker.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	for _, tc := range []struct {
		name string
		kind string
		opts bridge.Options
		stop func(cancel context.CancelFunc)
	}{
		{"timeout", "timeout", bridge.Options{Limits: sandbox.Options{Timeout: 100 * time.Millisecond}}, func(context.CancelFunc) {}},
		{"cancelled", "cancelled", bridge.Options{}, func(cancel context.CancelFunc) { time.AfterFunc(100*time.Millisecond, cancel) }},
		{"timeout in a worker", "timeout", bridge.Options{Runner: pool, Limits: sandbox.Options{Timeout: 100 * time.Millisecond}}, func(context.CancelFunc) {}},
		{"cancelled in a worker", "cancelled", bridge.Options{Runner: pool}, func(cancel context.CancelFunc) { time.AfterFunc(100*time.Millisecond, cancel) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts)
			e.tool("sleep", true, sleepBody)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tc.stop(cancel)
			start := time.Now()
			r := e.run(ctx, `return await tools.sleep({ms: 60000})`)
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the run took %v", d)
			}
			if r.Code() != registry.CodeCodeRunFailed || r.Error().Kind != tc.kind {
				t.Fatalf("%+v", r.Error())
			}
			if log := e.sink.log(); strings.Join(log, "|") != "start sleep call_1:code:1|end sleep call_1:code:1 error" {
				t.Fatalf("events %v", log)
			}
		})
	}
}
