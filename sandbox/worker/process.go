package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/codemode/codemode/internal/bytesize"
	"github.com/codemode/codemode/sandbox"
)

// maxSettleBytes is the largest tool value a settle frame carries, leaving room for the rest
// of the frame.
const maxSettleBytes = MaxFrameBytes - 64<<10

// process is one worker process, seen from the pool. It runs one program at a time; the pool
// hands it to one Run at a time.
type process struct {
	cmd      *exec.Cmd
	pid      int
	pipes    [2]*os.File  // this side's ends of the worker's stdin and stdout
	out      *frameWriter // the worker's stdin
	in       *frameReader // the worker's stdout; read by readLoop only
	stderr   *stderrTail
	limits   string                                    // what the worker applied, from its hello
	died     func(w *process, killed bool, why string) // called once if it ends other than by retiring
	hard     int64                                     // the hard memory cap it applied, from its hello
	grace    time.Duration                             // Options.KillGrace
	maxStack int64                                     // Options.MaxStack
	spinOK   func() bool                               // whether both sides may spin awaiting a frame (Options.SpinRuns); nil for never
	// spinAfresh clears the backoff of in's spinning (spinOn); readLoop calls it after each run.
	spinAfresh func()

	hello    chan *message // the worker's hello, once
	helloErr chan error    // or why there was none
	exited   chan struct{} // closed when the process has exited and its output is read
	waitErr  error         // how it exited; read after exited is closed
	killOnce sync.Once
	ready    atomic.Bool // said hello

	mu         sync.Mutex
	killReason string   // why the pool killed it; guarded by mu
	cur        *procRun // the run in progress; guarded by mu

	// Owned by the Run that holds the worker (and by the pool between runs).
	runs    int
	memory  int64 // the memory it held after its last run, as it reported
	namesID uint64
}

// Kill reasons that are not the worker's fault: it ends without being reported as dead.
const (
	killRetired = "retired"
	killClosed  = "pool closed"
)

// launch starts a worker process and its reader; awaitHello then waits until it is ready.
func launch(opts Options, env []string, died func(*process, bool, string), spinOK func() bool) (*process, error) {
	cmd := exec.Command(opts.Command[0], opts.Command[1:]...)
	cmd.Env = env
	cmd.Dir = opts.Dir
	setProcAttr(cmd)
	// The pipes are this side's own files (exec's StdinPipe hides its file), so that frames
	// cross them with rawPipe; the reader closes them once the worker has exited.
	childIn, stdin, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdout, childOut, err := os.Pipe()
	if err != nil {
		childIn.Close()
		stdin.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = childIn, childOut
	tail := &stderrTail{}
	cmd.Stderr = tail
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	childIn.Close()
	childOut.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		return nil, err
	}
	in := rawPipe(stdout)
	w := &process{
		cmd:      cmd,
		pid:      cmd.Process.Pid,
		pipes:    [2]*os.File{stdin, stdout},
		out:      newFrameWriter(rawPipe(stdin)),
		in:       newFrameReader(in, MaxFrameBytes),
		stderr:   tail,
		died:     died,
		grace:    opts.KillGrace,
		maxStack: opts.MaxStack,
		spinOK:   spinOK,
		exited:   make(chan struct{}),
		hello:    make(chan *message, 1),
		helloErr: make(chan error, 1),
	}
	w.spinAfresh = spinOn(in, w.awaiting)
	go w.readLoop()
	return w, nil
}

// awaitHello waits for the worker's hello; a worker that does not say it in time is killed.
func (w *process) awaitHello(timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case m := <-w.hello:
		w.limits, w.hard = m.Limits, m.Hard
		return nil
	case err := <-w.helloErr:
		w.kill("start failed")
		w.wait(5 * time.Second)
		return fmt.Errorf("the worker did not start (%v; %s): %s", err, describeExit(w.waitErr), w.stderr.excerpt())
	case <-timer.C:
		w.kill("start timed out")
		w.wait(5 * time.Second)
		return fmt.Errorf("the worker did not start within %v: %s", timeout, w.stderr.excerpt())
	}
}

// readLoop reads the worker's frames until its stdout ends, then reaps it.
func (w *process) readLoop() {
	defer func() {
		w.waitErr = w.cmd.Wait()
		w.pipes[0].Close()
		w.pipes[1].Close()
		close(w.exited)
		w.reportEnd()
	}()
	m, err := w.in.read()
	if err == nil && m.Type != msgHello {
		err = fmt.Errorf("first frame is %q, not hello", m.Type)
	}
	if err != nil {
		w.helloErr <- err
		return
	}
	w.ready.Store(true)
	w.hello <- m
	for {
		m, err := w.in.read()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				w.kill("protocol error: " + err.Error())
			}
			return
		}
		switch m.Type {
		case msgCall:
			if r := w.current(m.Run); r != nil {
				r.called = true
				r.call(m)
			}
		case msgDone:
			w.spinAfresh()
			if r := w.current(m.Run); r != nil {
				select {
				case r.done <- m:
				default:
					w.kill("protocol error: a second done frame for one run")
					return
				}
			}
		default:
			w.kill(fmt.Sprintf("protocol error: unexpected %q frame", m.Type))
			return
		}
	}
}

// reportEnd tells the pool about a worker that ended other than by being retired.
func (w *process) reportEnd() {
	w.mu.Lock()
	reason := w.killReason
	w.mu.Unlock()
	if !w.ready.Load() || reason == killRetired || reason == killClosed || w.died == nil {
		return
	}
	if reason != "" {
		w.died(w, true, reason)
		return
	}
	w.died(w, false, describeExit(w.waitErr)+": "+w.stderr.excerpt())
}

func (w *process) current(id uint64) *procRun {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur == nil || w.cur.id != id {
		return nil // a late frame of a run that has ended
	}
	return w.cur
}

// alive reports whether the worker is running and not being killed.
func (w *process) alive() bool {
	select {
	case <-w.exited:
		return false
	default:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.killReason == ""
}

// kill sends the worker SIGKILL once, recording why.
func (w *process) kill(reason string) {
	w.killOnce.Do(func() {
		w.mu.Lock()
		w.killReason = reason
		w.mu.Unlock()
		_ = w.cmd.Process.Kill()
	})
}

// wait waits up to d for the worker to exit.
func (w *process) wait(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.exited:
	case <-t.C:
	}
}

// procRun is one program running in a worker, seen from the pool.
type procRun struct {
	id       uint64
	w        *process
	host     sandbox.Host
	done     chan *message      // the done frame
	pending  pendingCalls       // calls awaiting the host's settlement
	finished atomic.Bool        // Run is returning: no more Calls, settlements are dropped
	callMu   sync.Mutex         // held while host.Call runs, so that none runs after finish
	called   bool               // a call of the run has been read; readLoop's own
	holder   sandbox.Holder     // host, when it holds its calls; nil otherwise
	stop     context.Context    // ends when the run is being stopped, for a call run inline
	halt     context.CancelFunc // ends stop
	inlining atomic.Bool        // the reader is running a call of the run (Holder.Release)
	halting  atomic.Bool        // the run is being stopped: its calls' settlements are not sent
}

// run runs one program on the worker and reports its result and whether the worker can be
// used again.
func (w *process) run(ctx context.Context, id uint64, source string, host sandbox.Host, names func() ([]string, error), namesID uint64, opts sandbox.Options) (sandbox.Result, bool) {
	r := &procRun{id: id, w: w, host: host, done: make(chan *message, 1)}
	if h, ok := host.(sandbox.Holder); ok {
		h.Hold()
		r.holder = h
		r.stop, r.halt = context.WithCancel(context.Background())
		defer r.halt()
	}
	w.mu.Lock()
	w.cur = r
	w.mu.Unlock()
	defer func() {
		r.finish()
		w.mu.Lock()
		w.cur = nil
		w.mu.Unlock()
	}()
	w.runs++

	m := &message{Type: msgRun, Run: id, Source: source, Options: &opts, NamesID: namesID, Spin: w.spin(), Hold: r.holder != nil}
	if rp, ok := host.(sandbox.Replayer); ok {
		m.Journal, m.Journaled = rp.Journal(), true
	}
	if namesID != w.namesID {
		list, err := names()
		if err != nil {
			return sandbox.Result{Err: &sandbox.Failure{Kind: sandbox.KindRuntime, Message: err.Error()}}, true
		}
		m.Names = list
	}
	if err := w.out.write(m); err != nil {
		if errors.Is(err, errFrameTooLarge) {
			return sandbox.Result{Err: &sandbox.Failure{Kind: sandbox.KindSyntax, Message: "the program is too large to send to a worker process"}}, true
		}
		w.wait(time.Second)
		return sandbox.Result{Err: w.deathFailure(opts)}, false
	}
	w.namesID = namesID

	// The deadline fires first at the run's timeout, when a host that holds calls has the
	// one running inline on the reader, if any, halted (see below), then deadlineSlack later.
	first := opts.Timeout + deadlineSlack
	if r.halt != nil {
		first = opts.Timeout
	}
	deadline := time.NewTimer(first)
	defer deadline.Stop()
	halted := false

	graceTimer := time.NewTimer(time.Hour)
	graceTimer.Stop()
	defer graceTimer.Stop()
	var grace <-chan time.Time
	ctxDone := ctx.Done()
	stopping := "" // the reason cancel was sent for
	stop := func(reason, detail string) {
		ctxDone = nil
		if stopping != "" {
			return
		}
		stopping = reason
		if r.halt != nil {
			r.halting.Store(true)
			r.halt() // a call running inline ends, so that the reader reads the done frame
		}
		_ = w.out.write(&message{Type: msgCancel, Run: id, Reason: reason, Detail: detail})
		graceTimer.Reset(w.grace)
		grace = graceTimer.C
	}
	for {
		select {
		case d := <-r.done:
			w.memory = d.Memory
			return d.Result.sandbox(), !d.Result.Abandoned
		case <-w.exited:
			select {
			case d := <-r.done: // it answered before it went
				return d.Result.sandbox(), false
			default:
			}
			return sandbox.Result{Err: w.deathFailure(opts)}, false
		case <-deadline.C:
			if r.halt != nil && !halted {
				// A call running inline on the reader ends, so that the worker's
				// done frame (it stops the program at the same timeout) is read at
				// once. Its settlement is not sent: the program must see its run
				// time out, not the call fail.
				halted = true
				r.halting.Store(true)
				r.halt()
				deadline.Reset(deadlineSlack)
				continue
			}
			stop(reasonTimeout, "")
		case <-ctxDone:
			detail := ""
			if cause := context.Cause(ctx); cause != nil {
				detail = cause.Error()
			}
			stop(reasonCancelled, detail)
		case <-grace:
			if r.inlining.Load() {
				// The reader is in the host's call, which halt cancelled, not the worker
				// in its program: wait for it as for any call in flight.
				graceTimer.Reset(w.grace)
				continue
			}
			w.kill(fmt.Sprintf("run %s: the program did not stop within %v of being cancelled", stopping, w.grace))
			w.wait(5 * time.Second)
			if stopping == reasonTimeout {
				return sandbox.Result{Err: sandbox.TimeoutFailure(opts.Timeout)}, false
			}
			return sandbox.Result{Err: sandbox.CancelledFailure(context.Cause(ctx))}, false
		}
	}
}

// finish ends the run on the pool's side: it waits for a Call in progress and makes every
// later settlement a no-op.
func (r *procRun) finish() {
	r.finished.Store(true)
	r.callMu.Lock()
	defer r.callMu.Unlock() // an empty critical section: it waits out a Call in progress
}

// call hands one of the program's tool calls to the host. It runs on the reader goroutine;
// the host returns promptly and settles later, from any goroutine. A host that holds its
// calls (sandbox.Holder) has it released at once: run here, on the reader, when the worker
// says the program awaits it alone (m.Inline), started elsewhere otherwise.
func (r *procRun) call(m *message) {
	if !r.dispatch(m) || r.holder == nil {
		return
	}
	r.inlining.Store(m.Inline)
	r.holder.Release(m.Inline, r.stop)
	r.inlining.Store(false)
}

// dispatch gives the call to the host and reports whether it did (not after finish).
func (r *procRun) dispatch(m *message) bool {
	r.callMu.Lock()
	defer r.callMu.Unlock()
	if r.finished.Load() {
		return false
	}
	r.pending.add(m.Seq, func(s sandbox.Settlement) {
		if !r.finished.Load() && !r.halting.Load() {
			r.w.settle(r.id, m.Seq, m.Name, s)
		}
	})
	settle := func(s sandbox.Settlement) { r.pending.resolve(m.Seq, s) }
	defer func() {
		if x := recover(); x != nil {
			settle(sandbox.Settlement{Err: &sandbox.CallError{ToolName: m.Name, Message: fmt.Sprintf("internal error: dispatching the call panicked: %v", x)}})
		}
	}()
	r.host.Call(sandbox.Call{Seq: m.Seq, Name: m.Name, Args: m.Args, Line: m.Line, Column: m.Column, Journal: m.Journal}, settle)
	return true
}

// settle sends a call's outcome to the worker. A value that is not JSON, or too large for a
// frame, rejects the call instead.
func (w *process) settle(run uint64, seq int, name string, s sandbox.Settlement) {
	m := &message{Type: msgSettle, Run: run, Seq: seq, Spin: w.spin()}
	switch {
	case s.Err != nil:
		m.Error = &callError{ToolName: s.Err.ToolName, Code: s.Err.Code, Message: s.Err.Message}
	case len(s.Value) > maxSettleBytes:
		m.Error = &callError{ToolName: name, Code: "INVALID_TOOL_OUTPUT", Message: fmt.Sprintf("the tool's value is too large to enter a worker process (%d bytes; the limit is %d)", len(s.Value), maxSettleBytes)}
	case len(s.Value) > 0 && !json.Valid(s.Value):
		m.Error = &callError{ToolName: name, Code: "INVALID_TOOL_OUTPUT", Message: "the tool's value is not valid JSON"}
	default:
		m.Value = s.Value
	}
	// A write error means the worker is gone; the run sees it exit.
	_ = w.out.write(m)
}

func (w *process) spin() bool { return w.spinOK != nil && w.spinOK() }

// awaiting reports whether the reader should spin on an empty pipe (rawConn.spinRead): while
// a run is in progress (its next frame is a call or done) and the pool allows it, once the run
// has made a call. Until then the worker is waking and starting the run (a runtime, a
// compile), which takes longer than a spin. Called by readLoop.
func (w *process) awaiting() bool {
	if !w.spin() {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cur != nil && w.cur.called
}

// deathFailure says why a worker that exited during a run ended, for the model that wrote the
// program. Called after exited is closed.
func (w *process) deathFailure(opts sandbox.Options) *sandbox.Failure {
	w.mu.Lock()
	reason := w.killReason
	w.mu.Unlock()
	text := w.stderr.String()
	switch {
	case reason == killClosed:
		return &sandbox.Failure{Kind: sandbox.KindRuntime, Message: "the run was stopped: the worker pool was closed"}
	case reason != "":
		return &sandbox.Failure{Kind: sandbox.KindRuntime, Message: "the worker process was stopped (" + reason + ")"}
	case strings.Contains(text, "stack overflow") || strings.Contains(text, "stack exceeds"):
		return &sandbox.Failure{Kind: sandbox.KindLimit, Message: fmt.Sprintf(
			"the program exceeded the worker's stack limit of %s (native recursion on deeply nested data or source); the worker process died and was replaced",
			bytesize.Format(w.maxStack))}
	case strings.Contains(text, "out of memory") || strings.Contains(text, "cannot allocate memory"):
		return &sandbox.Failure{Kind: sandbox.KindLimit, Message: fmt.Sprintf(
			"the program exceeded its memory limit of %s: its worker process ran out of memory and was replaced", bytesize.Format(opts.Memory))}
	case w.hard > 0 && runtimeCrash(text):
		// At the hard cap the allocation that fails is not always the program's: a thread
		// the runtime starts, or the collector's own work buffers, and the runtime then
		// crashes instead of reporting "out of memory". A Go program (goja included) cannot
		// otherwise crash the runtime itself.
		return &sandbox.Failure{Kind: sandbox.KindLimit, Message: fmt.Sprintf(
			"the program exceeded its memory limit of %s: its worker process crashed at its hard memory cap of %s (%s) and was replaced",
			bytesize.Format(opts.Memory), bytesize.Format(w.hard), w.stderr.excerpt())}
	case killedBySignal(w.waitErr):
		return &sandbox.Failure{Kind: sandbox.KindLimit, Message: "the worker process was killed from outside (by the system's out-of-memory killer?) and was replaced"}
	default:
		return &sandbox.Failure{Kind: sandbox.KindRuntime, Message: fmt.Sprintf(
			"the worker process died (%s) and was replaced: %s", describeExit(w.waitErr), w.stderr.excerpt())}
	}
}

// runtimeCrash reports whether a worker's stderr shows the Go runtime itself failing (a
// fatal signal in runtime code, a thread it could not create), rather than a Go panic or
// fatal error of code it runs.
func runtimeCrash(stderr string) bool {
	for _, s := range []string{"SIGSEGV", "SIGABRT", "SIGBUS", "pthread_create failed", "failed to create new OS thread"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// describeExit renders how a process exited.
func describeExit(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &ee):
		return ee.ProcessState.String()
	default:
		return err.Error()
	}
}
