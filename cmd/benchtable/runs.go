package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dop251/goja"

	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
	"github.com/codemode/codemode/sandbox/worker"
)

// gojaFloor is the floor of a trivial run: a new goja runtime running a
// precompiled trivial async function, which is what any run_code program
// must at least cost.
func gojaFloor() op {
	prg := goja.MustCompile("floor.js", "(async function () { return 1 })()", false)
	return func() error {
		vm := goja.New()
		_, err := vm.RunProgram(prg)
		return err
	}
}

// runFigures measures whole runs through App.Run (pipeline, sandbox, and
// the session log on SQLite, as `codemode serve` configures it by default):
// the trivial run against goja's floor and the Node vm peer, a 20-call run
// against the vm and isolated-vm peers, and the cost of one nested call against a direct
// runtime.Execute of the same tool. The same runs on a memory store show
// what the log costs. The peer runs one round after each Go round.
func runFigures(e *env) ([]Row, error) {
	ctx := e.ctx
	lite, err := newApp(ctx, appConfig("sqlite://"+filepath.Join(e.dir, "runs.db"), inproc, true))
	if err != nil {
		return nil, err
	}
	defer lite.Close()
	mem, err := newApp(ctx, appConfig("memory://", inproc, true))
	if err != nil {
		return nil, err
	}
	defer mem.Close()

	// SQLite on tmpfs: the same store and statements, but fsync costs
	// nothing, which splits the log's cost into CPU and disk.
	tmpfs := lite
	if e.o.tmpfs != "" {
		dir, err := os.MkdirTemp(e.o.tmpfs, "codemode-bench-")
		if err != nil {
			return nil, fmt.Errorf("-tmpfs: %w", err)
		}
		defer os.RemoveAll(dir)
		if tmpfs, err = newApp(ctx, appConfig("sqlite://"+filepath.Join(dir, "runs.db"), inproc, true)); err != nil {
			return nil, err
		}
		defer tmpfs.Close()
	}

	direct := runtime.Request{CallID: "call_direct", Name: "math_add", Arguments: `{"a":1,"b":2}`, Scope: "default"}
	ops := []op{
		runOp(ctx, lite, trivialProgram, wantTrivial), // 0
		gojaFloor(),                                    // 1
		runOp(ctx, lite, oneCall, wantOne),             // 2
		runOp(ctx, lite, elevenCalls, wantEleven),      // 3
		runOp(ctx, lite, twentyCalls, wantTwenty),      // 4
		executeOp(ctx, lite.Runtime, direct),           // 5
		runOp(ctx, mem, trivialProgram, wantTrivial),   // 6
		runOp(ctx, mem, oneCall, wantOne),              // 7
		runOp(ctx, mem, elevenCalls, wantEleven),       // 8
		runOp(ctx, tmpfs, trivialProgram, wantTrivial), // 9
		runOp(ctx, tmpfs, oneCall, wantOne),            // 10
		runOp(ctx, tmpfs, elevenCalls, wantEleven),     // 11
	}
	if e.o.tmpfs == "" {
		ops = ops[:9]
	}
	samples := make([][]float64, len(ops))
	allocs := make([][]float64, len(ops))
	var peerTrivial, peerTwenty, ivmTrivial, ivmTwenty []float64
	var peerErr, ivmErr error
	peerNode, ivmEngine := "", ""
	for range e.o.rounds {
		for i, fn := range ops {
			s, err := measureRound(fn, e.o.roundTime)
			if err != nil {
				return nil, err
			}
			samples[i] = append(samples[i], s.nsPerOp/1e3)
			allocs[i] = append(allocs[i], s.allocsPerOp)
		}
		if peerErr == nil {
			if p, err := runPeer(ctx, e.o.node, vmPeer, e.o.peerIterations); err != nil {
				peerErr = err
			} else {
				peerNode = p.Node
				peerTrivial = append(peerTrivial, p.Programs["trivial"].MeanUS)
				peerTwenty = append(peerTwenty, p.Programs["calls20"].MeanUS)
			}
		}
		if ivmErr == nil {
			// An isolate per run costs milliseconds: a tenth of the vm peer's runs
			// take as long.
			if p, err := runPeer(ctx, e.o.node, ivmPeer, max(e.o.peerIterations/10, 1)); err != nil {
				ivmErr = err
			} else {
				ivmEngine = p.Engine
				ivmTrivial = append(ivmTrivial, p.Programs["trivial"].MeanUS)
				ivmTwenty = append(ivmTwenty, p.Programs["calls20"].MeanUS)
			}
		}
	}
	m := func(i int) float64 { return median(samples[i]) }
	a := func(i int) float64 { return median(allocs[i]) }
	e.machine.Node = peerNode

	trivial := Row{Figure: "trivial run in-process (App.Run, SQLite log)", Value: m(0), Floor: m(1), FloorName: "new goja runtime",
		Unit: "µs", Target: "≤ 100 µs", AllocsPerOp: a(0)}.withRatio()
	trivial = trivial.judge(trivial.Value <= 100)
	rows := []Row{trivial}
	if e.o.tmpfs != "" {
		rows = append(rows, Row{Figure: "  same, SQLite on tmpfs (no fsync)", Value: m(9), Floor: m(1), FloorName: "new goja runtime",
			Unit: "µs", AllocsPerOp: a(9)}.withRatio())
	}
	rows = append(rows, Row{Figure: "  same, memory store (no log I/O)", Value: m(6), Floor: m(1), FloorName: "new goja runtime",
		Unit: "µs", AllocsPerOp: a(6)}.withRatio())

	if peerErr != nil {
		why := peerErr.Error()
		if errors.Is(peerErr, errNoNode) {
			why = "node is not installed"
		}
		rows = append(rows, skipped("trivial run ÷ Node vm peer", why), skipped("20-call run ÷ Node vm peer", why))
	} else {
		pt := Row{Figure: "trivial run ÷ Node vm peer", Value: m(0), Floor: median(peerTrivial), FloorName: "peer",
			Unit: "µs", Target: "≤ 0.10×"}.withRatio()
		rows = append(rows, pt.judge(pt.Ratio <= 0.10))
		pw := Row{Figure: "20-call run ÷ Node vm peer", Value: m(4), Floor: median(peerTwenty), FloorName: "peer",
			Unit: "µs", Target: "≤ 5×", AllocsPerOp: a(4)}.withRatio()
		rows = append(rows, pw.judge(pw.Ratio <= 5))
	}
	const ivmFigure = "20-call run ÷ isolated-vm peer"
	switch {
	case ivmErr != nil:
		why := ivmErr.Error()
		if errors.Is(ivmErr, errNoNode) {
			why = "node is not installed"
		}
		rows = append(rows, skipped(ivmFigure, why))
	default:
		iw := Row{Figure: ivmFigure, Value: m(4), Floor: median(ivmTwenty), FloorName: ivmEngine,
			Unit: "µs", Target: "< 1×", Note: fmt.Sprintf("its trivial run %.0f µs", median(ivmTrivial))}.withRatio()
		rows = append(rows, iw.judge(iw.Ratio < 1))
	}

	// One nested call is the difference between an 11-call and a 1-call
	// program, per call; its floor is the same tool run directly through
	// the pipeline.
	perCall := (m(3) - m(2)) / 10
	nested := Row{Figure: "nested call (bridge + pipeline + SQLite log)", Value: perCall, Floor: m(5), FloorName: "direct Execute",
		Unit: "µs", Target: "≤ floor + 15 µs", Note: fmt.Sprintf("+%.1f µs", perCall-m(5))}.withRatio()
	rows = append(rows, nested.judge(perCall-m(5) <= 15))
	if e.o.tmpfs != "" {
		fsCall := (m(11) - m(10)) / 10
		rows = append(rows, Row{Figure: "  same, SQLite on tmpfs (no fsync)", Value: fsCall, Floor: m(5), FloorName: "direct Execute",
			Unit: "µs", Note: fmt.Sprintf("+%.1f µs", fsCall-m(5))}.withRatio())
	}
	memCall := (m(8) - m(7)) / 10
	rows = append(rows, Row{Figure: "  same, memory store (no log I/O)", Value: memCall, Floor: m(5), FloorName: "direct Execute",
		Unit: "µs", Note: fmt.Sprintf("+%.1f µs", memCall-m(5))}.withRatio())
	return rows, nil
}

// isolationFigures measures process isolation. End to end, the trivial run
// with isolation "process" against the same run in-process, when app.New
// accepts that setting. At the sandbox level (no pipeline, no log), the
// trivial and the 20-call program run by a worker.Pool against
// sandbox.InProcess, with a host that settles math_add at once; this
// executable serves as the pool's worker (package worker's init).
func isolationFigures(e *env) ([]Row, error) {
	ctx := e.ctx
	var rows []Row
	const figure = "trivial run, process isolation (App.Run, SQLite log)"
	cfg := appConfig("sqlite://"+filepath.Join(e.dir, "isolated.db"), process, true)
	if iso, err := newApp(ctx, cfg); err != nil {
		rows = append(rows, skipped(figure, err.Error()))
	} else {
		defer iso.Close()
		local, err := newApp(ctx, appConfig("sqlite://"+filepath.Join(e.dir, "inproc.db"), inproc, true))
		if err != nil {
			return nil, err
		}
		defer local.Close()
		ms, err := measureAlternating(e.o.rounds, e.o.roundTime,
			runOp(ctx, iso, trivialProgram, wantTrivial), runOp(ctx, local, trivialProgram, wantTrivial))
		if err != nil {
			return nil, err
		}
		rows = append(rows, Row{Figure: figure, Value: ms[0].us, Floor: ms[1].us, FloorName: "in-process", Unit: "µs",
			AllocsPerOp: ms[0].allocsPerOp}.withRatio())
	}

	pool, err := worker.New(worker.Options{})
	if err != nil {
		return append(rows, skipped("trivial program, worker process (sandbox only)", err.Error())), nil
	}
	defer pool.Close()
	programs := []struct{ figure, code, want string }{
		{"trivial program, worker process (sandbox only)", trivialProgram, wantTrivial},
		{"20-call program, worker process (sandbox only)", twentyCalls, wantTwenty},
	}
	var ops []op
	for _, p := range programs {
		ops = append(ops, runnerOp(ctx, pool, p.code, p.want), runnerOp(ctx, sandbox.InProcess{}, p.code, p.want))
	}
	ms, err := measureAlternating(e.o.rounds, e.o.roundTime, ops...)
	if err != nil {
		return nil, err
	}
	for i, p := range programs {
		rows = append(rows, Row{Figure: p.figure, Value: ms[2*i].us, Floor: ms[2*i+1].us, FloorName: "in-process",
			Unit: "µs", AllocsPerOp: ms[2*i].allocsPerOp}.withRatio())
	}
	return rows, nil
}

// runnerOp runs code with r against sandboxtest.Host and checks its value.
func runnerOp(ctx context.Context, r sandbox.Runner, code, want string) op {
	return func() error {
		res := r.Run(ctx, code, sandboxtest.Host{}, sandbox.Options{})
		if res.Err != nil {
			return fmt.Errorf("run %q: %s", code, res.Err.Message)
		}
		if string(res.Value) != want {
			return fmt.Errorf("run %q returned %s, want %s", code, res.Value, want)
		}
		return nil
	}
}

// env is what every figure shares.
type env struct {
	ctx     context.Context
	o       options
	dir     string // a temporary directory for databases
	machine *Machine
}
