package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/codemode/codemode/internal/positive"
	"github.com/codemode/codemode/sandbox"
)

// Defaults for Options fields left at zero.
const (
	DefaultWarm          = 2
	DefaultMaxWorkers    = 64
	DefaultMaxIdle       = 8
	DefaultMaxRuns       = 1000
	DefaultRecycleMemory = 256 << 20
	DefaultMaxStack      = 128 << 20
	DefaultStartTimeout  = 30 * time.Second
	DefaultKillGrace     = 500 * time.Millisecond
	// hardHeadroom is what a worker's hard cap allows beyond its memory budget and two
	// maximal stacks (a stack grows by copying into one twice its size): the Go runtime's
	// own mappings, about 50 MiB in an idle worker, with room to spare.
	hardHeadroom = 256 << 20
	// softAllowance is added to the memory budget for the worker's Go soft limit: the
	// runtime and the sandbox's own heap, a few MiB in an idle worker.
	softAllowance = 64 << 20
	// deadlineSlack lets a worker report its own timeout (with its logs) before the pool
	// sends cancel.
	deadlineSlack = 100 * time.Millisecond
)

// Options configure a Pool. The zero value works.
type Options struct {
	// Command starts a worker: an executable and its arguments. Default: this process's
	// executable with the argument "worker". It must be a program that imports this
	// package, which turns it into a worker through EnvVar.
	Command []string
	// Env adds KEY=VALUE entries to the workers' environment. Otherwise a worker sees only
	// EnvVar and some Go runtime variables of this process (GOGC, GODEBUG, GOTRACEBACK,
	// GORACE, GOCOVERDIR, TMPDIR): no secret in this process's environment reaches the
	// programs' process. A worker runs with GOMAXPROCS=1 unless Env sets it.
	Env []string
	// Dir is the workers' working directory. Default: the root directory.
	Dir string
	// Warm is how many idle workers the pool keeps started ahead, so that a run does not
	// wait for a process to start. The pool starts them after its first run. Default
	// DefaultWarm; negative for none.
	Warm int
	// MaxWorkers bounds the worker processes, busy and idle. A run that finds them all busy
	// waits for one, as long as its context allows. Default DefaultMaxWorkers.
	MaxWorkers int
	// MaxIdle bounds the idle workers kept after a burst: set it to the number of runs the
	// service admits at once, so that steady load never starts and retires workers. A worker
	// is never retired as surplus while a run waits for one. Default DefaultMaxIdle, and at
	// least Warm.
	MaxIdle int
	// SpinRuns is how many runs may be in progress for their frames to be awaited by spinning:
	// while no more are, a worker awaiting a settlement and this process awaiting a call
	// retry the pipe for up to 50 µs before they sleep. That saves a process wake-up per
	// frame that comes that soon, but holds a CPU meanwhile, which the other side needs when
	// runs outnumber the CPUs. Default half of GOMAXPROCS, at least 1; negative for none.
	SpinRuns int
	// MaxRuns recycles a worker after this many runs. Default DefaultMaxRuns.
	MaxRuns int
	// RecycleMemory recycles a worker that holds more memory than this after a run: what
	// its Go runtime has mapped and not returned to the system, which for a worker is its
	// resident size without the executable. Default DefaultRecycleMemory, or half of Memory
	// when that is more; negative for never.
	RecycleMemory int64
	// Memory is a worker's memory budget: the largest Options.Memory a run gets, and with a
	// small allowance the worker's Go soft memory limit. Default sandbox.DefaultMemory.
	Memory int64
	// HardMemory is a worker's hard memory cap (RLIMIT_DATA on Linux; none elsewhere and in
	// builds with the race detector). A worker that reaches it dies, and its run fails with
	// kind "limit". Default Memory + 2×MaxStack + 256 MiB; negative for none.
	HardMemory int64
	// MaxStack bounds a worker's goroutine stacks (debug.SetMaxStack). Past it the worker
	// dies with a fatal stack overflow, and its run fails with kind "limit". Default
	// DefaultMaxStack.
	MaxStack int64
	// StartTimeout bounds the start of a worker. Default DefaultStartTimeout.
	StartTimeout time.Duration
	// KillGrace is how long a worker may take to stop a run after the pool sends it cancel
	// (at the run's timeout or its context's end) before the pool kills it. Default
	// DefaultKillGrace.
	KillGrace time.Duration
	// Logger records workers that die or are killed (warn) and that start or retire
	// (debug). Default: slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Warm == 0 {
		o.Warm = DefaultWarm
	}
	o.Warm = max(o.Warm, 0)
	o.MaxWorkers = positive.Or(o.MaxWorkers, DefaultMaxWorkers)
	o.MaxIdle = positive.Or(o.MaxIdle, DefaultMaxIdle)
	o.MaxIdle = max(o.MaxIdle, o.Warm)
	o.MaxRuns = positive.Or(o.MaxRuns, DefaultMaxRuns)
	if o.SpinRuns == 0 {
		o.SpinRuns = max(runtime.GOMAXPROCS(0)/2, 1)
	}
	o.Memory = positive.Or(o.Memory, sandbox.DefaultMemory)
	if o.RecycleMemory == 0 {
		o.RecycleMemory = max(DefaultRecycleMemory, o.Memory/2)
	}
	o.MaxStack = positive.Or(o.MaxStack, DefaultMaxStack)
	if o.HardMemory == 0 {
		o.HardMemory = o.Memory + 2*o.MaxStack + hardHeadroom
	}
	o.StartTimeout = positive.Or(o.StartTimeout, DefaultStartTimeout)
	o.KillGrace = positive.Or(o.KillGrace, DefaultKillGrace)
	if o.Dir == "" {
		o.Dir = string(os.PathSeparator)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

func (o Options) workerConfig() config {
	return config{Version: protocolVersion, Memory: o.Memory + softAllowance, HardMemory: max(o.HardMemory, 0), MaxStack: o.MaxStack}
}

// inheritedEnv are the variables a worker inherits from this process.
var inheritedEnv = []string{"GOGC", "GODEBUG", "GOTRACEBACK", "GORACE", "GOCOVERDIR", "TMPDIR"}

// ErrClosed is returned for runs on a closed pool.
var ErrClosed = errors.New("the worker pool is closed")

// Pool runs programs in worker processes. It implements sandbox.Runner; it is safe for
// concurrent use, and Close stops every worker.
type Pool struct {
	opts    Options
	env     []string
	seed    maphash.Seed
	nextRun atomic.Uint64
	running atomic.Int32 // runs in progress, for spinOK

	mu       sync.Mutex
	idle     []*process            // most recently used last; guarded by mu
	all      map[*process]struct{} // launched and not yet forgotten; guarded by mu
	total    int                   // workers counted against MaxWorkers: in all, or about to be; guarded by mu
	starting int                   // background starts in progress; guarded by mu
	waiting  int                   // runs waiting for a worker; guarded by mu
	starts   sync.WaitGroup        // background starts, waited for by Close
	closed   bool                  // guarded by mu
	freed    chan struct{}         // closed (and replaced) when a worker becomes free; guarded by mu
	stats    Stats                 // guarded by mu
}

var _ sandbox.Runner = (*Pool)(nil)

// Stats counts what a pool has done.
type Stats struct {
	Started int // workers started
	Retired int // workers stopped by the pool: recycled, surplus, or closed
	Died    int // workers that died on their own (crash, memory or stack cap)
	Killed  int // workers killed because a run did not stop in time
	Idle    int // workers idle now
	Busy    int // workers running a program now
}

// New returns a pool; it starts workers on its first run.
func New(opts Options) (*Pool, error) {
	opts = opts.withDefaults()
	if len(opts.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("worker pool: find this executable: %w", err)
		}
		opts.Command = []string{exe, "worker"}
	}
	cfg, err := json.Marshal(opts.workerConfig())
	if err != nil {
		return nil, err
	}
	env := []string{EnvVar + "=" + string(cfg)}
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, opts.Env...)
	return &Pool{
		opts:  opts,
		env:   env,
		seed:  maphash.MakeSeed(),
		all:   make(map[*process]struct{}),
		freed: make(chan struct{}),
	}, nil
}

// Run runs source in a worker process: the program runs there, every tool call comes back to
// host in this process, and the settlement goes back. Limits as in sandbox.Run, plus the
// worker's: opts.Memory is at most the pool's Memory; a run past its timeout (or whose ctx
// ends) that the worker does not stop within KillGrace is stopped by killing the worker; a
// worker that dies (memory or stack cap, crash) fails its run with kind "limit" or "runtime"
// saying what happened, and is replaced.
//
// host must answer Has consistently with Names: a worker answers Has from the names it got
// when the run started.
func (p *Pool) Run(ctx context.Context, source string, host sandbox.Host, opts sandbox.Options) sandbox.Result {
	if host == nil {
		host = noTools{}
	}
	opts = p.clamp(opts.WithDefaults())
	if ctx.Err() != nil {
		return sandbox.Result{Err: sandbox.CancelledFailure(context.Cause(ctx))}
	}
	if len(source) > sandbox.MaxSourceBytes {
		return sandbox.Result{Err: &sandbox.Failure{Kind: sandbox.KindSyntax, Message: fmt.Sprintf("program is %d bytes; the limit is %d", len(source), sandbox.MaxSourceBytes)}}
	}
	w, err := p.acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return sandbox.Result{Err: sandbox.CancelledFailure(context.Cause(ctx))}
		}
		return sandbox.Result{Err: &sandbox.Failure{Kind: sandbox.KindRuntime, Message: "could not start a worker process: " + err.Error()}}
	}
	names := func() ([]string, error) { return hostNames(host) }
	namesID := uint64(0)
	if k, ok := host.(sandbox.KeyedNames); ok {
		namesID = k.NamesKey()
	}
	if namesID == 0 {
		list, err := hostNames(host)
		if err != nil {
			p.release(w, true)
			return sandbox.Result{Err: &sandbox.Failure{Kind: sandbox.KindRuntime, Message: err.Error()}}
		}
		namesID = p.namesID(list)
		names = func() ([]string, error) { return list, nil }
	}
	p.running.Add(1)
	res, reusable := w.run(ctx, p.nextRun.Add(1), source, host, names, namesID, opts)
	p.running.Add(-1)
	p.release(w, reusable)
	return res
}

// spinOK reports whether the runs' frames may be awaited by spinning (SpinRuns), on both sides.
func (p *Pool) spinOK() bool { return p.running.Load() <= int32(p.opts.SpinRuns) }

// clamp keeps a run's limits within what the pool's workers and frames allow.
func (p *Pool) clamp(o sandbox.Options) sandbox.Options {
	o.Memory = min(o.Memory, p.opts.Memory)
	o.MaxResultBytes = min(o.MaxResultBytes, MaxFrameBytes/4)
	o.MaxArgBytes = min(o.MaxArgBytes, MaxFrameBytes/4)
	o.MaxLogBytes = min(o.MaxLogBytes, MaxFrameBytes/16) // escaped as JSON, a byte may take six
	return o
}

func hostNames(host sandbox.Host) (names []string, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("internal error: listing the tools panicked: %v", x)
		}
	}()
	return host.Names(), nil
}

// namesID identifies a set of tool names, so that a worker that has it is not sent it again.
// Never 0, which a worker starts with. Keys from a KeyedNames host are used as they are (a
// host's own key and a hash of names may meet only with a chance of 2^-63, and then a worker
// is sent names it already has under another key: harmless).
func (p *Pool) namesID(names []string) uint64 {
	var h maphash.Hash
	h.SetSeed(p.seed)
	for _, n := range names {
		h.WriteString(n)
		h.WriteByte(0)
	}
	return h.Sum64() | 1
}

// acquire takes an idle worker or starts one, waiting while MaxWorkers are busy.
func (p *Pool) acquire(ctx context.Context) (*process, error) {
	p.mu.Lock()
	for {
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		for len(p.idle) > 0 {
			w := p.idle[len(p.idle)-1]
			p.idle = p.idle[:len(p.idle)-1]
			if w.alive() {
				p.mu.Unlock()
				p.topUp()
				return w, nil
			}
			p.forget(w, false) // died while idle
		}
		if p.total < p.opts.MaxWorkers {
			p.total++
			p.mu.Unlock()
			w, err := p.start()
			if err != nil {
				p.mu.Lock()
				p.signal()
				p.mu.Unlock()
				return nil, err
			}
			p.topUp()
			return w, nil
		}
		freed := p.freed
		p.waiting++
		p.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			p.mu.Lock()
			p.waiting--
			p.mu.Unlock()
			return nil, ctx.Err()
		}
		p.mu.Lock()
		p.waiting--
	}
}

// release returns a worker after a run: to the idle list, or retired when it cannot be
// reused, has run MaxRuns programs, has grown past RecycleMemory, or is surplus (more than
// MaxIdle idle while no run waits for a worker).
func (p *Pool) release(w *process, reusable bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.signal()
	surplus := len(p.idle) >= p.opts.MaxIdle && p.waiting == 0
	switch {
	case !w.alive():
		p.forget(w, false)
	case p.closed || !reusable || w.runs >= p.opts.MaxRuns || (p.opts.RecycleMemory > 0 && w.memory > p.opts.RecycleMemory) || surplus:
		p.forget(w, true)
	default:
		p.idle = append(p.idle, w)
		return
	}
	go p.topUp()
}

// forget drops a worker that has died or is being retired (killed). Must hold mu.
func (p *Pool) forget(w *process, retire bool) {
	if _, ok := p.all[w]; !ok {
		return
	}
	delete(p.all, w)
	p.total--
	if retire {
		p.stats.Retired++
		w.kill("retired")
		p.opts.Logger.Debug("worker retired", "pid", w.pid, "runs", w.runs, "memory", w.memory)
	}
}

// signal wakes runs waiting for a worker. Must hold mu.
func (p *Pool) signal() {
	close(p.freed)
	p.freed = make(chan struct{})
}

// topUp starts workers in the background until Warm are idle or starting.
func (p *Pool) topUp() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for need := p.opts.Warm - len(p.idle) - p.starting; need > 0 && p.total < p.opts.MaxWorkers && !p.closed; need-- {
		p.total++
		p.starting++
		p.starts.Add(1)
		go func() {
			defer p.starts.Done()
			w, err := p.start()
			p.mu.Lock()
			defer p.mu.Unlock()
			defer p.signal()
			p.starting--
			if err != nil {
				if !p.closed {
					p.opts.Logger.Warn("could not start a worker process", "err", err)
				}
				return
			}
			if p.closed {
				p.forget(w, true)
				return
			}
			p.idle = append(p.idle, w)
		}()
	}
}

// start launches a worker and waits for its hello. The caller has counted it in total; on
// error, start has uncounted it.
func (p *Pool) start() (*process, error) {
	w, err := launch(p.opts, p.env, p.died, p.spinOK)
	if err != nil {
		p.mu.Lock()
		p.total--
		p.mu.Unlock()
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.total--
		p.mu.Unlock()
		w.kill(killClosed)
		w.wait(5 * time.Second)
		return nil, ErrClosed
	}
	p.all[w] = struct{}{} // from here Close can kill it
	p.stats.Started++
	p.mu.Unlock()
	if err := w.awaitHello(p.opts.StartTimeout); err != nil {
		p.mu.Lock()
		p.forget(w, false)
		p.mu.Unlock()
		return nil, err
	}
	p.opts.Logger.Debug("worker started", "pid", w.pid, "limits", w.limits)
	return w, nil
}

// died records a worker that died on its own or was killed for a stuck run.
func (p *Pool) died(w *process, killed bool, why string) {
	p.mu.Lock()
	if killed {
		p.stats.Killed++
	} else {
		p.stats.Died++
	}
	p.mu.Unlock()
	p.opts.Logger.Warn("worker process ended", "pid", w.pid, "killed", killed, "why", why)
}

// Stats reports the pool's counters.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Idle = len(p.idle)
	s.Busy = max(len(p.all)-len(p.idle)-p.starting, 0)
	return s
}

// Close kills every worker, idle or busy (a busy worker's run fails with kind "runtime"),
// waits for them to exit, and makes later runs fail. It is safe to call more than once.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var ws []*process
	for w := range p.all {
		ws = append(ws, w)
	}
	p.idle = nil
	p.signal()
	p.mu.Unlock()
	for _, w := range ws {
		w.kill(killClosed)
	}
	for _, w := range ws {
		w.wait(5 * time.Second)
	}
	p.starts.Wait()
	return nil
}

// noTools is the Host used when Run is given none.
type noTools struct{}

func (noTools) Call(c sandbox.Call, settle func(sandbox.Settlement)) {
	settle(sandbox.Settlement{Err: &sandbox.CallError{ToolName: c.Name, Message: "no such tool"}})
}
func (noTools) Has(string) bool { return false }
func (noTools) Names() []string { return nil }

// stderrTail keeps the start and the end of a worker's stderr: a Go fatal error names its
// cause in its first lines and the failing code in its last.
type stderrTail struct {
	mu   sync.Mutex
	head []byte
	tail []byte
}

// Bytes of a worker's stderr kept from its start and from its end.
const (
	stderrHeadBytes = 4 << 10
	stderrTailBytes = 4 << 10
)

func (s *stderrTail) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(b)
	if room := stderrHeadBytes - len(s.head); room > 0 {
		k := min(room, len(b))
		s.head = append(s.head, b[:k]...)
		b = b[k:]
	}
	s.tail = append(s.tail, b...)
	if over := len(s.tail) - stderrTailBytes; over > 0 {
		s.tail = append(s.tail[:0], s.tail[over:]...)
	}
	return n, nil
}

func (s *stderrTail) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.head) + string(s.tail)
}

// excerpt is what a failure message quotes of a dead worker's stderr: the first line naming
// a fatal error, panic or signal, or else its last lines.
func (s *stderrTail) excerpt() string {
	var lines []string
	for _, l := range strings.Split(s.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "(no output)"
	}
	out := ""
	for _, l := range lines {
		for _, p := range []string{"fatal error:", "panic:", "runtime:", "runtime/cgo:", "SIG"} {
			if strings.HasPrefix(l, p) && out == "" {
				out = l
			}
		}
	}
	if out == "" {
		out = strings.Join(lines[max(len(lines)-3, 0):], " | ")
	}
	if len(out) > 300 {
		out = out[:300] + "…"
	}
	return out
}

var _ io.Writer = (*stderrTail)(nil)
