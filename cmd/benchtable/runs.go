package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dop251/goja"

	"github.com/codemode/codemode/app"
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
	apps, err := openRunApps(e)
	if err != nil {
		return nil, err
	}
	defer apps.close()
	r, err := measureRuns(e, apps.ops(e))
	if err != nil {
		return nil, err
	}
	e.machine.Node = r.vm.name
	rows := r.trivialRows(e.o.tmpfs != "")
	rows = append(rows, r.peerRows()...)
	return append(rows, r.nestedRows(e.o.tmpfs != "")...), nil
}

// runApps are the apps runFigures measures: the SQLite log, a memory store
// and, with -tmpfs, SQLite on tmpfs (the same store and statements, but
// fsync costs nothing, which splits the log's cost into CPU and disk; lite
// again without it).
type runApps struct {
	lite, mem, tmpfs *app.App
	closers          []func()
}

func (a *runApps) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
}

func openRunApps(e *env) (_ *runApps, err error) {
	apps := &runApps{}
	defer func() {
		if err != nil {
			apps.close()
		}
	}()
	open := func(store string) (*app.App, error) {
		a, err := newApp(e.ctx, appConfig(store, inproc, true))
		if err == nil {
			apps.closers = append(apps.closers, func() { a.Close() })
		}
		return a, err
	}
	if apps.lite, err = open("sqlite://" + filepath.Join(e.dir, "runs.db")); err != nil {
		return nil, err
	}
	if apps.mem, err = open("memory://"); err != nil {
		return nil, err
	}
	apps.tmpfs = apps.lite
	if e.o.tmpfs != "" {
		dir, err := os.MkdirTemp(e.o.tmpfs, "codemode-bench-")
		if err != nil {
			return nil, fmt.Errorf("-tmpfs: %w", err)
		}
		apps.closers = append(apps.closers, func() { os.RemoveAll(dir) })
		if apps.tmpfs, err = open("sqlite://" + filepath.Join(dir, "runs.db")); err != nil {
			return nil, err
		}
	}
	return apps, nil
}

// The ops runFigures measures, by index into ops' list.
const (
	opTrivial = iota
	opFloor
	opOne
	opEleven
	opTwenty
	opDirect
	opMemTrivial
	opMemOne
	opMemEleven
	opTmpfsTrivial
	opTmpfsOne
	opTmpfsEleven
)

func (a *runApps) ops(e *env) []op {
	ctx := e.ctx
	direct := runtime.Request{CallID: "call_direct", Name: "math_add", Arguments: `{"a":1,"b":2}`, Scope: "default"}
	ops := []op{
		opTrivial:      runOp(ctx, a.lite, trivialProgram, wantTrivial),
		opFloor:        gojaFloor(),
		opOne:          runOp(ctx, a.lite, oneCall, wantOne),
		opEleven:       runOp(ctx, a.lite, elevenCalls, wantEleven),
		opTwenty:       runOp(ctx, a.lite, twentyCalls, wantTwenty),
		opDirect:       executeOp(ctx, a.lite.Runtime, direct),
		opMemTrivial:   runOp(ctx, a.mem, trivialProgram, wantTrivial),
		opMemOne:       runOp(ctx, a.mem, oneCall, wantOne),
		opMemEleven:    runOp(ctx, a.mem, elevenCalls, wantEleven),
		opTmpfsTrivial: runOp(ctx, a.tmpfs, trivialProgram, wantTrivial),
		opTmpfsOne:     runOp(ctx, a.tmpfs, oneCall, wantOne),
		opTmpfsEleven:  runOp(ctx, a.tmpfs, elevenCalls, wantEleven),
	}
	if e.o.tmpfs == "" {
		ops = ops[:opTmpfsTrivial]
	}
	return ops
}

// peerSeries is a peer's means per round, until its first failure.
type peerSeries struct {
	script          string
	iterations      int
	name            string // the peer's Node version or engine
	trivial, twenty []float64
	err             error
}

// round runs one round of the peer, unless one has failed.
func (p *peerSeries) round(e *env, name func(peerResult) string) {
	if p.err != nil {
		return
	}
	r, err := runPeer(e.ctx, e.o.node, p.script, p.iterations)
	if err != nil {
		p.err = err
		return
	}
	p.name = name(r)
	p.trivial = append(p.trivial, r.Programs["trivial"].MeanUS)
	p.twenty = append(p.twenty, r.Programs["calls20"].MeanUS)
}

// skipReason is why the peer's figures are skipped.
func (p *peerSeries) skipReason() string {
	if errors.Is(p.err, errNoNode) {
		return "node is not installed"
	}
	return p.err.Error()
}

// runSamples are the rounds' figures: µs and allocations per op, by op.
type runSamples struct {
	us, allocs [][]float64
	vm, ivm    peerSeries
}

func (r *runSamples) m(i int) float64 { return median(r.us[i]) }
func (r *runSamples) a(i int) float64 { return median(r.allocs[i]) }

func measureRuns(e *env, ops []op) (*runSamples, error) {
	r := &runSamples{
		us: make([][]float64, len(ops)), allocs: make([][]float64, len(ops)),
		vm: peerSeries{script: vmPeer, iterations: e.o.peerIterations},
		// An isolate per run costs milliseconds: a tenth of the vm peer's runs
		// take as long.
		ivm: peerSeries{script: ivmPeer, iterations: max(e.o.peerIterations/10, 1)},
	}
	for range e.o.rounds {
		for i, fn := range ops {
			s, err := measureRound(fn, e.o.roundTime)
			if err != nil {
				return nil, err
			}
			r.us[i] = append(r.us[i], s.nsPerOp/1e3)
			r.allocs[i] = append(r.allocs[i], s.allocsPerOp)
		}
		r.vm.round(e, func(p peerResult) string { return p.Node })
		r.ivm.round(e, func(p peerResult) string { return p.Engine })
	}
	return r, nil
}

// trivialRows: the trivial run against goja's floor, on each store.
func (r *runSamples) trivialRows(tmpfs bool) []Row {
	trivial := Row{Figure: "trivial run in-process (App.Run, SQLite log)", Value: r.m(opTrivial), Floor: r.m(opFloor), FloorName: "new goja runtime",
		Unit: "µs", Target: "≤ 100 µs", AllocsPerOp: r.a(opTrivial)}.withRatio()
	rows := []Row{trivial.judge(trivial.Value <= 100)}
	same := func(figure string, i int) Row {
		return Row{Figure: figure, Value: r.m(i), Floor: r.m(opFloor), FloorName: "new goja runtime", Unit: "µs", AllocsPerOp: r.a(i)}.withRatio()
	}
	if tmpfs {
		rows = append(rows, same("  same, SQLite on tmpfs (no fsync)", opTmpfsTrivial))
	}
	return append(rows, same("  same, memory store (no log I/O)", opMemTrivial))
}

// peerRows: the trivial and 20-call runs against the Node vm peer, the
// 20-call run against the isolated-vm peer.
func (r *runSamples) peerRows() []Row {
	var rows []Row
	if r.vm.err != nil {
		why := r.vm.skipReason()
		rows = append(rows, skipped("trivial run ÷ Node vm peer", why), skipped("20-call run ÷ Node vm peer", why))
	} else {
		pt := Row{Figure: "trivial run ÷ Node vm peer", Value: r.m(opTrivial), Floor: median(r.vm.trivial), FloorName: "peer",
			Unit: "µs", Target: "≤ 0.10×"}.withRatio()
		rows = append(rows, pt.judge(pt.Ratio <= 0.10))
		pw := Row{Figure: "20-call run ÷ Node vm peer", Value: r.m(opTwenty), Floor: median(r.vm.twenty), FloorName: "peer",
			Unit: "µs", Target: "≤ 5×", AllocsPerOp: r.a(opTwenty)}.withRatio()
		rows = append(rows, pw.judge(pw.Ratio <= 5))
	}
	const ivmFigure = "20-call run ÷ isolated-vm peer"
	if r.ivm.err != nil {
		return append(rows, skipped(ivmFigure, r.ivm.skipReason()))
	}
	iw := Row{Figure: ivmFigure, Value: r.m(opTwenty), Floor: median(r.ivm.twenty), FloorName: r.ivm.name,
		Unit: "µs", Target: "< 1×", Note: fmt.Sprintf("its trivial run %.0f µs", median(r.ivm.trivial))}.withRatio()
	return append(rows, iw.judge(iw.Ratio < 1))
}

// nestedRows: one nested call is the difference between an 11-call and a
// 1-call program, per call; its floor is the same tool run directly through
// the pipeline.
func (r *runSamples) nestedRows(tmpfs bool) []Row {
	direct := r.m(opDirect)
	row := func(figure string, one, eleven int) Row {
		perCall := (r.m(eleven) - r.m(one)) / 10
		return Row{Figure: figure, Value: perCall, Floor: direct, FloorName: "direct Execute",
			Unit: "µs", Note: fmt.Sprintf("+%.1f µs", perCall-direct)}.withRatio()
	}
	nested := row("nested call (bridge + pipeline + SQLite log)", opOne, opEleven)
	nested.Target = "≤ floor + 15 µs"
	rows := []Row{nested.judge(nested.Value-direct <= 15)}
	if tmpfs {
		rows = append(rows, row("  same, SQLite on tmpfs (no fsync)", opTmpfsOne, opTmpfsEleven))
	}
	return append(rows, row("  same, memory store (no log I/O)", opMemOne, opMemEleven))
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
