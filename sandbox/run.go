package sandbox

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/codemode/codemode/internal/gopool"
	"github.com/codemode/codemode/internal/positive"
)

// Defaults for Options fields left at zero (or set negative).
const (
	DefaultTimeout           = 30 * time.Second
	DefaultMaxCallStackDepth = 10000
	DefaultMaxLogBytes       = 1 << 20
	DefaultMaxResultBytes    = 4 << 20
	DefaultMaxArgBytes       = 4 << 20
	DefaultMaxCalls          = 1000
	DefaultMaxCallBytes      = 64 << 20
	DefaultMemory            = 512 << 20
)

const (
	// MaxDataDepth is the deepest nesting of arrays and objects that crosses the boundary, in
	// either direction (arguments, results, settled values). It matches encoding/json's limit,
	// so whatever leaves the sandbox can be decoded by the host.
	MaxDataDepth = 10000
	// maxTimers bounds the timers one run may have pending at once.
	maxTimers = 10000
	// maxMessageBytes bounds a failure message built from a program's thrown value.
	maxMessageBytes = 8 << 10
	// abandonGrace is how long Run waits, after the deadline or a cancellation interrupted the
	// VM, for the VM goroutine to stop. goja cannot interrupt native code (a huge
	// Array.prototype.join, say); past the grace Run returns anyway and the goroutine is left
	// to end at its next JavaScript instruction, unable to reach the Host or the logs.
	abandonGrace = 250 * time.Millisecond
)

// Options are the limits of one run. The zero value gives the defaults.
type Options struct {
	// Timeout is the run's wall-clock limit → Failure kind "timeout".
	Timeout time.Duration
	// MaxCallStackDepth bounds JavaScript call depth → kind "limit" (runaway recursion). The
	// default is about V8's depth for small functions, so recursion that works in Node works
	// here. Every call counts, a built-in's included: recursing through arr.map takes three
	// frames a level. Past it a call written in a try block throws V8's RangeError, which the
	// try catches (see trycall.go); an overflow nothing catches fails the run as a limit, named
	// as V8's RangeError.
	MaxCallStackDepth int
	// MaxLogBytes bounds captured console output, one byte per line counted for its newline.
	// The line that crosses the limit is cut, a marker line is added, and the run fails with
	// kind "limit".
	MaxLogBytes int
	// MaxResultBytes bounds the returned value's JSON text → kind "limit".
	MaxResultBytes int
	// MaxArgBytes bounds one call's argument JSON; a larger argument rejects that call with a
	// ToolCallError and dispatches nothing.
	MaxArgBytes int
	// MaxCalls bounds the tool calls dispatched in one run. The call past the limit is not
	// dispatched and the run ends at once with kind "limit": a program cannot catch it, so a
	// retry loop cannot spin until the timeout.
	MaxCalls int
	// MaxCallBytes bounds the argument JSON of all the tool calls of one run together (the
	// session log records each call's arguments, twice). The call that passes it is not
	// dispatched and the run ends at once with kind "limit", as past MaxCalls.
	MaxCallBytes int
	// Memory is the run's memory budget in bytes → kind "limit". goja has no allocator cap,
	// so it is enforced in two ways: the built-ins that allocate or loop in one native step
	// are capped in proportion to it (strings they build to Memory/16 UTF-16 code units;
	// arrays and typed arrays they make, and array-likes they walk, to Memory/32 elements;
	// ArrayBuffers and typed arrays to Memory/4 bytes; see guards.go; going past a cap fails
	// the run at once, uncatchably), and a heap watchdog fails the run when the Go heap growth
	// attributed to it passes Memory (see [Run]). A worker process adds hard caps of its own
	// (package sandbox/worker).
	Memory int64
}

// WithDefaults returns o with every field left at zero (or set negative) at its default.
func (o Options) WithDefaults() Options { return o.withDefaults() }

func (o Options) withDefaults() Options {
	o.Timeout = positive.Or(o.Timeout, DefaultTimeout)
	o.MaxCallStackDepth = positive.Or(o.MaxCallStackDepth, DefaultMaxCallStackDepth)
	o.MaxLogBytes = positive.Or(o.MaxLogBytes, DefaultMaxLogBytes)
	o.MaxResultBytes = positive.Or(o.MaxResultBytes, DefaultMaxResultBytes)
	o.MaxArgBytes = positive.Or(o.MaxArgBytes, DefaultMaxArgBytes)
	o.MaxCalls = positive.Or(o.MaxCalls, DefaultMaxCalls)
	o.MaxCallBytes = positive.Or(o.MaxCallBytes, DefaultMaxCallBytes)
	o.Memory = positive.Or(o.Memory, DefaultMemory)
	return o
}

// Result is the outcome of one run.
type Result struct {
	// Logs are the captured console lines in order: arguments joined by spaces, strings raw,
	// other values formatted like Node's util.inspect on one line. All console methods
	// (log, info, warn, error, debug) write here alike.
	Logs []string
	// Value is the JSON text of the returned value; nil when the program returned undefined
	// or failed.
	Value []byte
	// Err is nil on success.
	Err *Failure
	// Abandoned reports that Run returned before the program's goroutine stopped: it was
	// stopped from outside (timeout, cancellation, memory) while in native code that ignores
	// Interrupt, such as a huge Array.prototype.join. The goroutine ends at its next
	// JavaScript instruction, unable to reach the Host or the logs, but until then it holds
	// CPU and memory; a worker process that reports it is replaced.
	Abandoned bool
	// Journal is the last piece of the run's journal (see [Replayer]): what it recorded after
	// its last call. Empty when the run was abandoned.
	Journal string
}

// errStopped is the value the VM is interrupted with; the reason is in run.failure.
var errStopped = errors.New("sandbox: run stopped")

// Run executes p in a fresh goja runtime (runtimes are never reused, so nothing a program
// does to its globals survives it) and returns when the program's promise settles, the
// timeout passes, ctx is cancelled or a limit is hit. A context already cancelled fails the
// run with kind "cancelled" before anything runs. Run is safe to call from many goroutines at
// once. It never panics because of the program or the Host: every failure is in Result.Err.
//
// While runs are active, a heap watchdog samples the Go heap every few milliseconds and
// attributes its growth to the runs that were executing JavaScript meanwhile; a run whose
// share passes Options.Memory (confirmed after a forced collection) fails with kind "limit".
// In one process shared by many runs the attribution is an estimate; in a worker process,
// which runs one program at a time, it is the run's own growth.
func Run(ctx context.Context, p *Program, host Host, opts Options) Result {
	if p == nil || p.prg == nil {
		return Result{Err: &Failure{Kind: KindRuntime, Message: "no program to run"}}
	}
	if host == nil {
		host = noTools{}
	}
	if ctx.Err() != nil {
		return Result{Err: cancelled(ctx)}
	}
	r := newRun(p, host, opts.withDefaults())
	journal, keep := "", false
	if rp, ok := host.(Replayer); ok {
		journal, keep = rp.Journal(), true
	}
	if err := r.jr.begin(journal, keep); err != nil {
		return Result{Err: &Failure{Kind: KindDiverged, Message: "the run cannot be resumed: " + err.Error()}}
	}
	if keep {
		// Date and Math.random read the journal (journal.go); a run that keeps
		// none leaves goja its own, the system's.
		r.rt.SetTimeSource(r.now)
		r.rt.SetRandSource(r.random)
	}
	if h, ok := host.(Holder); ok {
		h.Hold()
		r.holder = h
	}
	watchdog.add(r)
	defer watchdog.remove(r)
	gopool.Go(r.main)

	deadline := time.NewTimer(r.opts.Timeout)
	defer deadline.Stop()
	select {
	case <-r.done:
	case <-deadline.C:
		r.fail(TimeoutFailure(r.opts.Timeout))
	case <-ctx.Done():
		r.fail(cancelled(ctx))
	}
	return r.close()
}

// TimeoutFailure is the failure of a run that passed its wall-clock limit.
func TimeoutFailure(limit time.Duration) *Failure {
	return &Failure{Kind: KindTimeout, Message: fmt.Sprintf("the program ran longer than its %v limit", limit)}
}

// CancelledFailure is the failure of a run whose context was cancelled with cause (nil for
// none).
func CancelledFailure(cause error) *Failure {
	msg := "the run was cancelled"
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &Failure{Kind: KindCancelled, Message: msg}
}

func cancelled(ctx context.Context) *Failure { return CancelledFailure(context.Cause(ctx)) }

// run is the state of one Run: the runtime and the loop that applies jobs to it, the host
// boundary (tool calls out, settlements and timers in, the logs and the result out) with its
// limits, and one field per platform module; the modules and the guards are installed against
// the run as their platformHost (platform.go). Fields without a guard note belong to the VM goroutine.
type run struct {
	rt     *goja.Runtime // created before the VM goroutine starts; Interrupt is safe anywhere
	prog   *Program
	host   Host
	opts   Options
	jr     journal       // its clock, randomness and order of jobs, recorded or replayed (journal.go)
	caps   caps          // built-in caps derived from opts.Memory
	guards builtinGuards // the guards on built-ins that enforce caps (guards.go)
	based  bool          // setupBase has run (a run set up ahead: see takeBlank)

	// The platform.
	console   console               // the console module
	timers    timers                // the timer module
	web       webAPIs               // the Web API module
	preludes  map[string]goja.Value // results of preludes run in this runtime
	inspected inspectCache          // what the inspector keeps between values (inspect.go)

	// The loop (main, loop, enter).
	objectProto *goja.Object  // see intrinsics
	arrayProto  *goja.Object  // see intrinsics
	trampoline  goja.Callable // runs next as a top-level call into the VM
	next        job
	jobs        int           // jobs entered so far: the program's start is job 0
	loopJob     int           // the job loopAt was read in
	loopAt      time.Time     // the clock as that job first read it for a timer (loopTime)
	value       []byte        // the result's JSON; read by Run only after done is closed
	stopped     atomic.Bool   // set with failure; the loop runs no more JavaScript
	idle        atomic.Bool   // the VM goroutine is waiting for a job (for the watchdog)
	ranJS       atomic.Bool   // JavaScript ran since the watchdog last looked
	wake        chan struct{} // capacity 1: a job was queued or the run was stopped
	done        chan struct{} // closed when the VM goroutine returns
	spare       []job         // the queue's other buffer, empty
	scratch     scratch       // buffers kept between calls

	// Tool calls (tools.go).
	toolCallError *goja.Object          // the class, made on first use
	bindings      map[string]goja.Value // tool functions made so far, by name
	calls         int                   // calls dispatched
	callBytes     int                   // argument bytes of the calls dispatched
	inflight      int                   // dispatched calls not yet settled in the VM
	holder        Holder                // host, when it holds calls for the VM to release; nil otherwise
	held          int                   // calls dispatched to holder since the last release
	heldSince     atomic.Int64          // when the first of them was (unix ns; 0 for none), for the watchdog
	inlining      atomic.Bool           // the VM goroutine is running a held call (Holder.Release)
	callsClosed   bool                  // guarded by callMu
	callMu        sync.Mutex            // held while the Host is called, so none is after close

	mu         sync.Mutex
	closed     bool               // guarded by mu
	failure    *Failure           // first failure wins; guarded by mu
	queue      []job              // jobs for the VM goroutine; guarded by mu
	logs       logSink            // guarded by mu
	stop       context.Context    // ends when the run fails (for a call run inline); guarded by mu
	stopCancel context.CancelFunc // guarded by mu
}

// logSink is the captured console output: Result.Logs.
type logSink struct {
	lines []string
	bytes int  // the lines' bytes, one more each for its newline
	full  bool // MaxLogBytes was reached: no more lines
}

// scratch are buffers a run keeps between calls, so that each does not allocate its own.
type scratch struct {
	frames    []goja.StackFrame // callSite's
	snapStack []snapFrame       // snapshot's, lent to one snapshot at a time
	jsonStack []jsonFrame       // fromJSON's
	jsonItems []any             // fromJSON's
	jsonKeys  map[string]string // object keys fromJSON has seen (see jsonString)
}

// newRun returns the run of p: one set up ahead when one is ready (see takeBlank), else a
// fresh one that main sets up.
func newRun(p *Program, host Host, opts Options) *run {
	r := takeBlank()
	if r == nil {
		r = allocRun()
	}
	r.prog, r.host, r.opts = p, host, opts
	r.caps = capsFor(opts.Memory)
	return r
}

// allocRun returns a run with a fresh runtime, nothing installed, and its platform modules
// wired to it.
func allocRun() *run {
	r := &run{rt: goja.New(), wake: make(chan struct{}, 1), done: make(chan struct{})}
	r.console.h, r.timers.h = r, r
	r.guards = builtinGuards{h: r, caps: &r.caps}
	r.web = webAPIs{h: r, timers: &r.timers}
	return r
}

// fail records the run's failure (the first one wins), interrupts any running JavaScript and
// wakes the loop. Safe from any goroutine.
func (r *run) fail(f *Failure) {
	r.mu.Lock()
	if r.failure == nil && !r.closed {
		r.failure = f
	}
	if r.stopCancel != nil {
		r.stopCancel()
	}
	r.mu.Unlock()
	r.stopped.Store(true)
	r.rt.Interrupt(errStopped)
	r.signal()
}

func (r *run) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// appendLog adds one captured line. Each line costs its bytes plus one for its newline. The
// line that crosses MaxLogBytes is cut to fit, a marker line follows, and the run fails.
func (r *run) appendLog(line string) {
	r.mu.Lock()
	if r.closed || r.logs.full {
		r.mu.Unlock()
		return
	}
	room := r.opts.MaxLogBytes - r.logs.bytes
	if len(line)+1 <= room {
		r.logs.lines = append(r.logs.lines, line)
		r.logs.bytes += len(line) + 1
		r.mu.Unlock()
		return
	}
	if cut := truncateUTF8(line, room-1); cut != "" {
		r.logs.lines = append(r.logs.lines, cut)
	}
	r.logs.lines = append(r.logs.lines, fmt.Sprintf("[console output truncated: the %d-byte log limit was reached]", r.opts.MaxLogBytes))
	r.logs.full = true
	r.mu.Unlock()
	r.fail(&Failure{Kind: KindLimit, Message: fmt.Sprintf("the program logged more than %d bytes", r.opts.MaxLogBytes)})
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// logRoom is how many bytes a formatter may produce before the line cannot fit anyway (one
// past the room left), and whether the log takes no more lines.
func (r *run) logRoom() (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opts.MaxLogBytes - r.logs.bytes + 1, r.logs.full || r.closed
}

// job is work for the VM goroutine.
type job interface{ run() }

// jobFunc is a job that calls itself.
type jobFunc func()

func (f jobFunc) run() { f() }

// enqueue hands a job to the VM goroutine. Jobs queued after the run closed are dropped.
func (r *run) enqueue(j job) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.queue = append(r.queue, j)
	r.mu.Unlock()
	r.signal()
}

// close ends the run: it waits for the VM goroutine (up to abandonGrace when the run was
// stopped from outside), shuts the Host, the queue, the logs and the timers, and builds the
// Result.
func (r *run) close() Result {
	finished := true
	select {
	case <-r.done:
	default:
		grace := time.NewTimer(abandonGrace)
		for waiting := true; waiting; {
			select {
			case <-r.done:
				waiting = false
			case <-grace.C:
				if r.inlining.Load() {
					// The VM goroutine is in the host's call, which the stop cancelled,
					// not in JavaScript: wait for it as for any call in flight.
					grace.Reset(abandonGrace)
					continue
				}
				finished, waiting = false, false
			}
		}
		grace.Stop()
	}
	r.callMu.Lock()
	r.callsClosed = true
	r.callMu.Unlock()

	r.mu.Lock()
	r.closed = true
	if r.stopCancel != nil {
		r.stopCancel()
	}
	r.queue = nil
	res := Result{Logs: r.logs.lines, Err: r.failure, Abandoned: !finished}
	r.mu.Unlock()
	if finished {
		res.Journal = r.jr.take() // the VM goroutine is done with it
	}
	r.timers.stop()

	if res.Err == nil {
		if finished {
			res.Value = r.value
		} else {
			// Unreachable: the VM goroutine is only abandoned after a failure was recorded.
			res.Err = &Failure{Kind: KindRuntime, Message: "the program did not stop"}
		}
	}
	return res
}

// main is the VM goroutine: set up, start the program, run the loop, settle the result.
func (r *run) main() {
	defer close(r.done)
	defer r.idle.Store(true)
	r.ranJS.Store(true)
	defer func() {
		// The last net: a panic here is a bug in goja or in this package, never the program's
		// doing, and it must not take the process down.
		if x := recover(); x != nil {
			r.fail(&Failure{Kind: KindRuntime, Message: fmt.Sprintf("internal error: %v", x)})
		}
	}()
	if err := r.setup(); err != nil {
		r.fail(&Failure{Kind: KindRuntime, Message: "internal error: set-up failed: " + err.Error()})
		return
	}
	v, err := r.rt.RunProgram(r.prog.prg)
	if !r.check(err) {
		return
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		r.fail(&Failure{Kind: KindSyntax, Message: "the program is not a function body (does it close the body with an unmatched '}'?)"})
		return
	}
	var args []goja.Value
	if r.prog.tryCalls {
		args = r.tryCallNatives()
	}
	ret, err := fn(goja.Undefined(), args...)
	if !r.check(err) {
		return
	}
	p := asPromise(ret)
	if p == nil {
		r.releaseHeld(false)
		r.enter(jobFunc(func() { r.finishValue(ret) }))
		return
	}
	r.loop(p)
}

var promiseType = reflect.TypeOf((*goja.Promise)(nil))

func asPromise(v goja.Value) *goja.Promise {
	o, ok := v.(*goja.Object)
	if !ok || o.ExportType() != promiseType {
		return nil
	}
	p, _ := o.Export().(*goja.Promise)
	return p
}

// loop applies queued jobs (settlements, timers) until the program's promise settles or the
// run is stopped. A promise still pending with nothing queued, no call in flight and no timer
// pending can never settle: that ends the run at once rather than at the timeout.
func (r *run) loop(p *goja.Promise) {
	for {
		if r.stopped.Load() {
			return
		}
		if p.State() != goja.PromiseStatePending {
			if r.jr.replaying() {
				r.diverged(fmt.Sprintf("the program finished where it went on before (the log has %s next)", r.jr.peek()))
				return
			}
			r.releaseHeld(false)
			r.enter(jobFunc(func() { r.finishPromise(p) }))
			return
		}
		if r.jr.replaying() {
			if !r.replayJob() {
				return
			}
			continue
		}
		r.mu.Lock()
		jobs := r.queue
		r.queue, r.spare = r.spare, nil // the two buffers take turns
		r.mu.Unlock()
		if len(jobs) == 0 {
			if r.releaseHeld(true) {
				continue // the call ran here: its settlement is queued
			}
			if r.inflight == 0 && r.timers.pending() == 0 {
				r.fail(&Failure{Kind: KindRuntime, Message: "the program's promise never settled: it awaits something that nothing will resolve (no tool call or timer is pending)"})
				return
			}
			r.idle.Store(true)
			<-r.wake
			r.idle.Store(false)
			r.ranJS.Store(true)
			continue
		}
		for i, j := range jobs {
			if r.stopped.Load() || p.State() != goja.PromiseStatePending {
				break
			}
			if !r.enter(r.noted(j)) {
				return
			}
			if i < len(jobs)-1 {
				r.releaseHeld(false) // the jobs after it must not hold back its calls
			}
		}
		clear(jobs)
		r.spare = jobs[:0]
	}
}

// releaseHeld releases the calls the last job made, when the host holds them (Holder). With
// awaiting set the loop is about to wait: when the program then awaits nothing but the one call
// it made (no job queued, no timer, no other call in flight), that call runs here, and
// releaseHeld reports true once it has settled. Runs on the VM goroutine.
func (r *run) releaseHeld(awaiting bool) bool {
	if r.held == 0 {
		return false
	}
	alone := awaiting && r.held == 1 && r.inflight == 1 && r.timers.pending() == 0 && !r.stopped.Load()
	r.held = 0
	r.heldSince.Store(0)
	if !alone {
		r.holder.Release(false, nil)
		return false
	}
	r.mu.Lock()
	alone = len(r.queue) == 0 && r.failure == nil
	if alone && r.stop == nil {
		r.stop, r.stopCancel = context.WithCancel(context.Background())
	}
	stop := r.stop
	r.mu.Unlock()
	if !alone {
		r.holder.Release(false, nil)
		return false
	}
	// Waiting on a tool, as the VM goroutine would otherwise: the heap watchdog charges
	// what the call allocates as it would on another goroutine.
	r.idle.Store(true)
	r.inlining.Store(true)
	ran := r.holder.Release(true, stop)
	r.inlining.Store(false)
	r.idle.Store(false)
	return ran
}

// releaseOverdue releases calls held longer than d while the job that made them goes on
// computing. Called by the heap watchdog, from its goroutine.
func (r *run) releaseOverdue(now time.Time, d time.Duration) {
	if since := r.heldSince.Load(); since != 0 && now.UnixNano()-since >= int64(d) && r.heldSince.CompareAndSwap(since, 0) {
		r.holder.Release(false, nil)
	}
}

// enter runs j as a top-level call into the VM, so that goja drains its promise jobs after it
// and reports interrupts and stack overflows as errors. It reports whether the run goes on.
func (r *run) enter(j job) bool {
	r.jobs++
	r.next = j
	_, err := r.trampoline(goja.Undefined())
	r.next = nil
	return r.check(err)
}

// check classifies an error returned at the top of the VM and reports whether the run goes on.
func (r *run) check(err error) bool {
	if err == nil {
		return !r.stopped.Load()
	}
	var so *goja.StackOverflowError
	var ie *goja.InterruptedError
	switch {
	case errors.As(err, &so):
		r.fail(&Failure{Kind: KindLimit, Message: fmt.Sprintf("RangeError: Maximum call stack size exceeded: the program passed the call stack depth of %d frames (runaway recursion?); nothing caught it (a try catches it around a call written in its block)", r.opts.MaxCallStackDepth)})
	case errors.As(err, &ie):
		r.fail(&Failure{Kind: KindRuntime, Message: "the program was interrupted"}) // normally recorded already
	default:
		// Only code outside the async body can throw to the top (a program that closes the
		// body early); describing the value may run its code, so that happens in the VM.
		var ex *goja.Exception
		if errors.As(err, &ex) && !r.stopped.Load() {
			v := ex.Value()
			r.enter(jobFunc(func() { r.fail(&Failure{Kind: KindRuntime, Message: r.describeThrown(v)}) }))
		}
		r.fail(&Failure{Kind: KindRuntime, Message: "uncaught exception"})
	}
	return false
}

// finishPromise turns the settled program promise into the run's outcome. Runs inside enter.
func (r *run) finishPromise(p *goja.Promise) {
	switch p.State() {
	case goja.PromiseStateFulfilled:
		r.finishValue(p.Result())
	case goja.PromiseStateRejected:
		r.fail(&Failure{Kind: KindRuntime, Message: r.describeThrown(p.Result())})
	}
}

// finishValue snapshots the returned value as the run's JSON result. Runs inside enter.
func (r *run) finishValue(v goja.Value) {
	if v == nil || goja.IsUndefined(v) {
		return
	}
	b, serr := r.snapshot(v, snapResult, r.opts.MaxResultBytes)
	if serr != nil {
		r.fail(serr.failure())
		return
	}
	r.value = b
}

// setup installs the program's globals: tools, ToolCallError, console, setTimeout and
// clearTimeout (setupBase, which a run set up ahead has had already), then the guards and
// platform additions the program's text calls for. The runtime has nothing else beyond
// ECMAScript built-ins: no require, no process, no file system, no network. Set-up does not
// depend on the number of tools, and what a trivial program does not use (ToolCallError, JSON
// decoding) is built on first use.
func (r *run) setup() error {
	if !r.based {
		if err := r.setupBase(); err != nil {
			return err
		}
	}
	r.rt.SetMaxCallStackSize(r.opts.MaxCallStackDepth)
	if err := r.guards.install(r.prog.guards &^ alwaysGuarded); err != nil {
		return err
	}
	return r.installFeatures(r.prog.features)
}

// uncaught fails the run with an exception nothing caught, thrown in where.
func (r *run) uncaught(err error, where string) {
	if isUncatchable(err) {
		panic(err)
	}
	msg := "uncaught exception"
	if ex, ok := err.(*goja.Exception); ok {
		msg = r.describeThrown(ex.Value())
	}
	r.fail(&Failure{Kind: KindRuntime, Message: "uncaught exception in " + where + ": " + msg})
}

// runtime is the run's goja runtime (platformHost).
func (r *run) runtime() *goja.Runtime { return r.rt }

// programFrame maps a line and column of the compiled program to the model's (platformHost).
func (r *run) programFrame(line, col int) (int, int, bool) { return r.prog.frame(line, col) }

// started is when the run began (platformHost).
func (r *run) started() time.Time { return r.jr.start }

// memoryCaps are the run's built-in caps (platformHost).
func (r *run) memoryCaps() caps { return r.caps }

// overCap fails the run for what passed one of its caps (platformHost; see builtinGuards).
func (r *run) overCap(what string, size float64, limit int64, unit string, divisor int64) {
	r.guards.overCap(what, size, limit, unit, divisor)
}

// stopping reports whether the run has failed or was stopped (platformHost).
func (r *run) stopping() bool { return r.stopped.Load() }

// timeout is the run's wall-clock limit (platformHost).
func (r *run) timeout() time.Duration { return r.opts.Timeout }

// function makes a Go function callable from JavaScript under name. goja would otherwise name
// it after the Go function, leaking this package's internals into the program. Panics in fn
// become JavaScript errors (see native).
func (r *run) function(name string, fn func(goja.FunctionCall) goja.Value) goja.Value {
	f := r.rt.ToValue(r.native(name, fn)).(*goja.Object)
	if err := f.DefineDataProperty("name", r.rt.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
	return f
}

// intrinsics returns Object.prototype and Array.prototype as the runtime created them; a
// program can replace the global constructors, not these.
func (r *run) intrinsics() (objectProto, arrayProto *goja.Object) {
	if r.objectProto == nil {
		r.objectProto = r.rt.NewObject().Prototype()
		r.arrayProto = r.rt.NewArray().Prototype()
	}
	return r.objectProto, r.arrayProto
}

// noTools is the Host used when Run is given none.
type noTools struct{}

func (noTools) Call(c Call, settle func(Settlement)) {
	settle(Settlement{Err: &CallError{ToolName: c.Name, Message: "no such tool"}})
}
func (noTools) Has(string) bool { return false }
func (noTools) Names() []string { return nil }
