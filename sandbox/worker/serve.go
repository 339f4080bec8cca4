package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"

	"github.com/codemode/codemode/internal/gcfloor"
	"github.com/codemode/codemode/sandbox"
)

// EnvVar is the environment variable that makes a process a worker. The pool sets it, to the
// worker's configuration as JSON, on every process it starts; a process that imports this
// package and finds it set turns into a worker before main runs (see the package doc).
const EnvVar = "CODEMODE_SANDBOX_WORKER"

// config is a worker's configuration, passed in EnvVar.
type config struct {
	Version    int   `json:"v"`
	Memory     int64 `json:"memory"`      // soft limit for the Go runtime, bytes
	HardMemory int64 `json:"hard_memory"` // RLIMIT_DATA, bytes; 0 for none
	MaxStack   int64 `json:"max_stack"`   // debug.SetMaxStack, bytes
}

func init() {
	v, ok := os.LookupEnv(EnvVar)
	if !ok {
		return
	}
	var cfg config
	if json.Unmarshal([]byte(v), &cfg) != nil || cfg.Version != protocolVersion {
		return // not set by a pool of this version: leave the process alone
	}
	os.Exit(offMainThread(func() int { return serveProcess(cfg) }))
}

// offMainThread runs f on a goroutine of its own and returns its result. The runtime locks
// the goroutine that runs init functions to the main thread, so a goroutine that blocks and
// wakes there (the protocol's reader, once per frame) has the one P handed between the main
// thread and another, two thread wake-ups each time; a new goroutine is not locked.
func offMainThread(f func() int) int {
	status := make(chan int)
	go func() { status <- f() }()
	return <-status
}

// Main serves the worker protocol on the process's stdin and stdout with the configuration
// in EnvVar, or the pool's defaults when it is unset, and returns the exit status: 0 when the
// parent closed stdin, 1 on a protocol error. It is what `codemode worker` runs; a process
// started by a pool becomes a worker before main, through this package's init.
func Main() int {
	cfg := Options{}.withDefaults().workerConfig()
	if v, ok := os.LookupEnv(EnvVar); ok {
		if err := json.Unmarshal([]byte(v), &cfg); err != nil {
			fmt.Fprintf(os.Stderr, "worker: %s: %v\n", EnvVar, err)
			return 1
		}
	}
	return serveProcess(cfg)
}

// serveProcess applies cfg's caps to this process and serves the protocol on stdin and
// stdout. Nothing else may write to stdout, so os.Stdout is pointed at stderr first.
func serveProcess(cfg config) int {
	limits, hard := applyLimits(cfg)
	in, out := protocolFiles()
	os.Stdout = os.Stderr
	if null, err := os.Open(os.DevNull); err == nil {
		os.Stdin = null
	}
	if err := serve(rawPipe(in), rawPipe(out), limits, hard); err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 1
	}
	return 0
}

// programCacheBytes bounds a worker's compiled-program cache, well within the soft memory
// limit's allowance beyond the runs' budget (softAllowance): a worker's cache shares the
// memory of every run the worker serves.
const programCacheBytes = 16 << 20

// gcFloor is the heap growth a worker allows between collections while its live heap is
// smaller (package gcfloor): at GOGC=100 a worker, whose live heap is a few megabytes and
// whose runs leave a few hundred kilobytes each, collected every twenty or so runs, and the
// runs that met a collection made up a trivial run's 99th percentile over HTTP (the floor
// collects a fraction as often; BENCHMARKS.md, "Figures behind the code's choices"). It costs
// each worker up to this much more resident memory; the soft memory limit still holds.
const gcFloor = 16 << 20

// applyLimits sets the Go runtime's stack and soft memory limits, the collector's floor, the
// hard memory cap and the compiled-program cache's bound, and describes what it applied, with
// the hard cap in bytes (0 when none).
func applyLimits(cfg config) (string, int64) {
	// One program at a time needs one P; with one, the goroutine a frame wakes runs on the
	// thread that read it, where a second P would have a sleeping thread woken for it, which
	// costs tens of microseconds per tool call on a virtual machine. Pool.Options.Env can set
	// GOMAXPROCS otherwise.
	if _, ok := os.LookupEnv("GOMAXPROCS"); !ok {
		runtime.GOMAXPROCS(1)
	}
	if cfg.MaxStack > 0 {
		debug.SetMaxStack(int(cfg.MaxStack))
	}
	if cfg.Memory > 0 {
		debug.SetMemoryLimit(cfg.Memory)
	}
	hard, applied := "none", int64(0)
	switch {
	case cfg.HardMemory <= 0:
	case raceEnabled:
		hard = "none (the race detector maps its shadow memory as data)"
	default:
		if err := setDataLimit(cfg.HardMemory); err != nil {
			hard = "none (" + err.Error() + ")"
		} else {
			hard, applied = fmt.Sprintf("RLIMIT_DATA %d", cfg.HardMemory), cfg.HardMemory
		}
	}
	gc := "GOGC=" + os.Getenv("GOGC") // set: the operator's choice
	if gcfloor.StartWith(gcFloor) {
		gc = fmt.Sprintf("gc floor %d", gcFloor)
	}
	sandbox.SetProgramCacheBytes(programCacheBytes)
	return fmt.Sprintf("stack %d, soft memory %d, %s, hard memory %s, program cache %d",
		cfg.MaxStack, cfg.Memory, gc, hard, sandbox.ProgramCacheBytes()), applied
}

// server is the worker side of the protocol.
type server struct {
	out  *frameWriter
	spin bool // the last run or settle frame allowed spinning; the reader's own

	mu     sync.Mutex
	active *workerRun // the run in progress; guarded by mu
	names  nameSet    // the last set of tool names the parent sent; guarded by mu
}

type nameSet struct {
	id   uint64
	list []string
	set  map[string]struct{}
}

// serve runs the protocol until in ends (nil) or a frame is bad (an error).
func serve(in io.Reader, out io.Writer, limits string, hard int64) error {
	s := &server{out: newFrameWriter(out)}
	spinAfresh := spinOn(in, s.awaiting)
	if err := s.out.write(&message{Type: msgHello, Version: protocolVersion, PID: os.Getpid(), Limits: limits, Hard: hard}); err != nil {
		return err
	}
	fr := newFrameReader(in, MaxFrameBytes)
	for {
		m, err := fr.read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch m.Type {
		case msgRun:
			s.spin = m.Spin
			spinAfresh()
			if err := s.start(m); err != nil {
				return err
			}
		case msgSettle:
			s.spin = m.Spin
			s.settle(m)
		case msgCancel:
			s.cancel(m)
		default:
			return fmt.Errorf("unexpected %q frame", m.Type)
		}
	}
}

// workerRun is one program running in the worker; it is the sandbox's Host and forwards
// every call to the parent.
type workerRun struct {
	id     uint64
	s      *server
	names  nameSet
	ctx    context.Context
	cancel context.CancelCauseFunc

	pending pendingCalls // calls awaiting a settle frame

	mu          sync.Mutex
	reason      string     // the cancel reason received; guarded by mu
	parentHolds bool       // the parent's host holds calls (the run frame's Hold)
	journal     string     // the journal to replay (the run frame's Journal)
	journaled   bool       // the parent's host keeps the journal (the run frame's Journaled)
	holding     bool       // calls wait for Release (sandbox.Holder); guarded by mu
	held        []*message // their frames; guarded by mu
}

func (s *server) start(m *message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != nil {
		return fmt.Errorf("run %d started while run %d is in progress", m.Run, s.active.id)
	}
	if m.Names != nil || m.NamesID != s.names.id {
		set := make(map[string]struct{}, len(m.Names))
		for _, n := range m.Names {
			set[n] = struct{}{}
		}
		s.names = nameSet{id: m.NamesID, list: m.Names, set: set}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	r := &workerRun{id: m.Run, s: s, names: s.names, ctx: ctx, cancel: cancel, parentHolds: m.Hold, journal: m.Journal, journaled: m.Journaled}
	s.active = r
	go r.execute(m.Source, *m.Options)
	return nil
}

func (r *workerRun) execute(source string, opts sandbox.Options) {
	stopMonitor := keepMonitorAwake()
	var host sandbox.Host = r
	if r.journaled {
		host = journaledRun{r}
	}
	res := sandbox.InProcess{}.Run(r.ctx, source, host, opts)
	stopMonitor()
	r.mu.Lock()
	reason := r.reason
	r.mu.Unlock()
	if reason == reasonTimeout && res.Err != nil && res.Err.Kind == sandbox.KindCancelled {
		// The parent's clock ran out a moment before the sandbox's own.
		res.Err = sandbox.TimeoutFailure(opts.WithDefaults().Timeout)
	}
	r.cancel(nil)
	held := tidyAfterRun()
	r.s.mu.Lock()
	r.s.active = nil
	r.s.mu.Unlock()
	// A write error means the parent is gone; the read loop sees the end of stdin and exits.
	_ = r.s.out.write(&message{Type: msgDone, Run: r.id, Result: toWire(res), Memory: held})
}

// tidyAfterRun returns a large heap left by a run to the operating system, so that the
// worker is judged by its own size, and reports the memory it holds: what the Go runtime has
// mapped and not released, which for a pure-Go process is its resident size without the
// executable, and costs a fraction of a microsecond to read (/proc/self/statm costs tens).
func tidyAfterRun() int64 {
	const big = 64 << 20
	sample := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(sample)
	if sample[0].Value.Uint64() > big {
		debug.FreeOSMemory()
		metrics.Read(sample)
	}
	return int64(sample[1].Value.Uint64() - sample[2].Value.Uint64())
}

// Call implements sandbox.Host: the call goes to the parent (once released, when held), and
// its settle comes back.
func (r *workerRun) Call(c sandbox.Call, settle func(sandbox.Settlement)) {
	m := &message{Type: msgCall, Run: r.id, Seq: c.Seq, Name: c.Name, Args: c.Args, Line: c.Line, Column: c.Column, Journal: c.Journal}
	r.pending.add(c.Seq, settle)
	r.mu.Lock()
	if r.holding {
		r.held = append(r.held, m)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.send(m)
}

var _ sandbox.Holder = (*workerRun)(nil)

// journaledRun is a workerRun whose parent's host keeps the run's journal.
type journaledRun struct{ *workerRun }

var _ sandbox.Replayer = journaledRun{}

// Journal implements sandbox.Replayer: the parent's host's journal, or "" to run live.
func (r journaledRun) Journal() string { return r.journal }

// Hold implements sandbox.Holder: call frames wait for Release, when the parent's host holds
// calls too (otherwise a frame is sent at once, to be worked on while the program goes on).
func (r *workerRun) Hold() {
	r.mu.Lock()
	r.holding = r.parentHolds
	r.mu.Unlock()
}

// Release implements sandbox.Holder: the held frames go to the parent, the last marked for
// running inline when the program awaits it alone. The call always runs in the parent, so
// Release never runs it here.
func (r *workerRun) Release(alone bool, _ context.Context) bool {
	r.mu.Lock()
	held := r.held
	r.held = nil
	if alone && len(held) == 1 && r.pending.count() == 1 {
		held[0].Inline = true
	}
	r.mu.Unlock()
	for _, m := range held {
		r.send(m)
	}
	return false
}

// send writes a call frame; a call that cannot be sent is settled as failed.
func (r *workerRun) send(m *message) {
	err := r.s.out.write(m)
	if err == nil {
		return
	}
	msg := "the worker could not reach its parent: " + err.Error()
	if errors.Is(err, errFrameTooLarge) {
		msg = fmt.Sprintf("the argument is too large to leave a worker process (%d bytes; the limit is %d)", len(m.Args), MaxFrameBytes)
	}
	r.pending.resolve(m.Seq, sandbox.Settlement{Err: &sandbox.CallError{ToolName: m.Name, Message: msg}})
}

// Has implements sandbox.Host from the names the parent sent with the run.
func (r *workerRun) Has(name string) bool {
	_, ok := r.names.set[name]
	return ok
}

// Names implements sandbox.Host.
func (r *workerRun) Names() []string { return r.names.list }

// awaiting reports whether the reader should spin on an empty pipe (rawConn.spinRead): while
// a run is active (the next frame is a settlement or a cancel) and the pool allows it; between
// runs the worker parks. Called by the reader.
func (s *server) awaiting() bool {
	if !s.spin {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active != nil
}

func (s *server) current(id uint64) *workerRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil || s.active.id != id {
		return nil // a late message for a run that has ended
	}
	return s.active
}

func (s *server) settle(m *message) {
	r := s.current(m.Run)
	if r == nil {
		return
	}
	st := sandbox.Settlement{Value: m.Value}
	if m.Error != nil {
		st = sandbox.Settlement{Err: &sandbox.CallError{ToolName: m.Error.ToolName, Code: m.Error.Code, Message: m.Error.Message}}
	}
	r.pending.resolve(m.Seq, st)
}

func (s *server) cancel(m *message) {
	r := s.current(m.Run)
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.reason == "" {
		r.reason = m.Reason
	}
	r.mu.Unlock()
	var cause error
	if m.Detail != "" {
		cause = errors.New(m.Detail)
	}
	if cause == nil {
		cause = context.Canceled
	}
	r.cancel(cause)
}
