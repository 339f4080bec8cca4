package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/internal/gopool"
	"github.com/codemode/codemode/internal/requestid"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/session"
)

// ToolCall is one tool call of a model response.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // the model's raw JSON string, logged verbatim
}

// CallResult is the outcome of one call of a step.
type CallResult struct {
	ToolCallID string
	Result     *runtime.Result // never nil
}

// StepResult is the outcome of a step.
type StepResult struct {
	Results []CallResult // in model order
	// Contexts are the additional contexts of this step's results, in FIFO
	// order (call order, then tool-deferred, wrapper, post-policy). They are
	// in the log with the results and are committed as user/context events
	// at the start of the session's next step.
	Contexts []registry.Context
	// ConcludesTurn reports that a result asked to end the turn: the next
	// step starts a new turn.
	ConcludesTurn bool
}

// Step runs one model response's tool calls in the session and logs them.
//
// It fails with session.ErrNotFound for an unknown session and with
// ErrInvalidCalls (nothing appended) for calls with an empty, duplicate or
// already used id, or text that is not UTF-8. Otherwise it first commits the
// contexts the previous step's results carried, as user/context events in
// FIFO order, then runs the calls: each appends tool/call when it enters the
// pipeline, and the tool/results are appended in model order. Consecutive
// concurrency-safe calls overlap (up to Options.MaxParallel); an exclusive
// call starts only when every earlier result is in the log, and later calls
// wait for its result. When ctx ends, calls in flight are cancelled and
// calls not yet started are logged as a synthetic tool/call and tool/result
// pair with code ABORTED_BEFORE_DISPATCH: every tool/call gets a result.
//
// A store failure is returned with the results gathered so far; calls whose
// tool/call could not be appended were not run.
//
// A step with no calls only commits the pending contexts.
func (a *Agent) Step(ctx context.Context, sessionID string, calls []ToolCall) (StepResult, error) {
	out, gate, err := a.step(ctx, sessionID, calls, stepOptions{})
	return out, waitGate(ctx, gate, err)
}

// StepGated is Step with output gating: it returns as soon as the results
// are known, with the Gate that opens when everything the step wrote is
// durable. The caller must not show the results before Gate.Wait returns
// nil, and reports the step as failed when it returns an error. The
// session's next step in this process waits until the writes have
// resolved, whether or not anyone waits on the Gate.
func (a *Agent) StepGated(ctx context.Context, sessionID string, calls []ToolCall) (StepResult, *Gate, error) {
	return a.step(ctx, sessionID, calls, stepOptions{})
}

// StepOptions adjust one StepWith.
type StepOptions struct {
	// Hold, when positive, lets the step's run_code calls suspend when a
	// call of theirs waits on an ask this long (RunOptions.Hold): such a
	// call's result has code SUSPENDED, which is not its result: that comes
	// once the run resumes (Call, AwaitCall). The session takes no step
	// until then (ErrSuspended).
	Hold time.Duration
}

// StepWith is StepGated with options.
func (a *Agent) StepWith(ctx context.Context, sessionID string, calls []ToolCall, opts StepOptions) (StepResult, *Gate, error) {
	return a.step(ctx, sessionID, calls, stepOptions{hold: opts.Hold})
}

// waitGate waits for a gate whatever becomes of the caller (the step's log
// must stay consistent) and returns the step's error or the gate's.
func waitGate(ctx context.Context, g *Gate, err error) error {
	if gerr := g.Wait(context.WithoutCancel(ctx)); err == nil {
		err = gerr
	}
	return err
}

// stepOptions are what Run adds to a step.
type stepOptions struct {
	codeEntry bool             // the calls may be run_code in any scope
	timeout   time.Duration    // run_code's wall-clock limit; zero keeps the bridge's
	hold      time.Duration    // run_code may suspend after an ask waits this long; 0: never
	also      bridge.EventSink // also receives the nested events
	create    *session.Session // the session to create with the step's first write
	minted    bool             // the calls' ids come from Options.NewID: unique, so unused
}

// RunOptions adjust one Run.
type RunOptions struct {
	// Timeout is the program's wall-clock limit; zero keeps the bridge's.
	Timeout time.Duration
	// Hold, when positive, lets the run suspend when one of its calls' asks
	// waits unanswered this long: Run returns a SUSPENDED result, the call
	// stays open in the log, and it resumes by replay once the asks are
	// answered (Resume). Zero: the run waits for its asks as long as they
	// may take.
	Hold time.Duration
	// CallID names the run_code call in the log; empty mints "run_<id>".
	CallID string
	// Create, when set, is a new session (ID and Scope) that Run creates in
	// the transaction of its first events instead of using sessionID's: a
	// run in a new session costs no write of its own. Its ID must be
	// sessionID. With Options.Leases the session is created first, in a
	// write of its own, so that the run holds its lease like any step.
	Create *session.Session
	// MaxCallsBytes bounds the arguments and content of the sub-calls Run
	// hands back (the log keeps them whole): past it, calls are trimmed, then
	// left out, and RunReport counts them. Zero means DefaultMaxCallsBytes.
	MaxCallsBytes int
	// Gated makes Run return as soon as the result is known, before its
	// log is durable, with RunReport.Gate to wait on before showing it
	// (output gating, as StepGated).
	Gated bool
}

// DefaultMaxCallsBytes is RunOptions.MaxCallsBytes when left zero.
const DefaultMaxCallsBytes = 256 << 10

// RunReport is what Run hands back.
type RunReport struct {
	Result *runtime.Result // the run_code result; never nil
	// Calls are the program's settled SDK calls in submission order, each
	// the payload of its tool/code-dispatch event, within MaxCallsBytes.
	Calls []session.CodeDispatch
	// Trimmed counts calls whose arguments or content were cut to fit;
	// Omitted counts calls left out of Calls to fit.
	Trimmed, Omitted int
	// Gate, for a Run with RunOptions.Gated, opens when the run's log is
	// durable (see StepGated); nil otherwise (Run waited).
	Gate *Gate
}

// Run is a client's own entry to Code Mode (POST /v1/run): a one-call step
// whose call is run_code with code and description (run_code derives a
// description from the code when it is blank), logged exactly like a
// model's run_code call and resolved in the session's scope whatever its
// mode. It returns the run_code result and the program's settled SDK calls
// in submission order. Errors are Step's; a run that could not be logged
// returns a nil report.
func (a *Agent) Run(ctx context.Context, sessionID, code, description string, opts RunOptions) (*RunReport, error) {
	args, err := json.Marshal(struct {
		Code        string `json:"code"`
		Description string `json:"description,omitempty"`
	}{code, strings.TrimSpace(description)})
	if err != nil {
		return nil, fmt.Errorf("agent: run arguments: %w", err)
	}
	id, minted := opts.CallID, false
	if id == "" {
		id, minted = "run_"+a.opts.NewID(), true
	}
	calls := collector{budget: opts.MaxCallsBytes}
	if calls.budget <= 0 {
		calls.budget = DefaultMaxCallsBytes
	}
	if opts.Create != nil && opts.Create.ID != sessionID {
		return nil, fmt.Errorf("agent: Create names session %q, not %q", opts.Create.ID, sessionID)
	}
	res, gate, err := a.step(ctx, sessionID, []ToolCall{{ID: id, Name: registry.RunCode, Arguments: string(args)}}, stepOptions{codeEntry: true, timeout: opts.Timeout, hold: opts.Hold, also: &calls, create: opts.Create, minted: minted})
	if !opts.Gated {
		err, gate = waitGate(ctx, gate, err), nil
	}
	if len(res.Results) == 0 {
		return nil, err
	}
	rep := calls.report(res.Results[0].Result)
	rep.Gate = gate
	return rep, err
}

// step runs a step and returns its results with the Gate of its log; the
// step's session stays locked until its writes have resolved.
func (a *Agent) step(ctx context.Context, sessionID string, calls []ToolCall, o stepOptions) (StepResult, *Gate, error) {
	if err := checkCalls(calls); err != nil {
		return StepResult{}, nil, err
	}
	unlock, err := a.lock(ctx, sessionID)
	if err != nil {
		return StepResult{}, nil, err
	}
	createInWrite := o.create
	if a.opts.Leases && o.create != nil {
		// Created first, so that the step holds the session's lease while
		// its calls are open, as every other does: if this process stops,
		// the lease lapses and another closes them (RecoverLapsed).
		if err := a.store.CreateSession(ctx, *o.create); err != nil {
			unlock()
			return StepResult{}, nil, fmt.Errorf("agent: create session %q: %w", sessionID, err)
		}
		createInWrite = nil
	}
	lease, err := a.takeLease(ctx, sessionID, createInWrite != nil)
	if err != nil {
		unlock()
		return StepResult{}, nil, err
	}
	st, err := a.stepState(ctx, sessionID, calls, o)
	if err == nil {
		var closed bool
		if closed, err = a.closeLeft(ctx, sessionID, st, lease); closed && err == nil {
			st, err = a.stepState(ctx, sessionID, calls, o) // fold what recovery wrote
		}
	}
	if err != nil {
		a.endLease(lease, unlock)
		return StepResult{}, nil, err
	}
	// From here on the log must stay consistent whatever the caller does.
	logCtx := context.WithoutCancel(ctx)
	r := &stepRun{
		a: a, sessionID: sessionID, scope: st.Scope, calls: calls, codeEntry: o.codeEntry, timeout: o.timeout, holdFor: o.hold, logCtx: logCtx,
		requestID: requestid.From(ctx),
		w:         newLogWriter(a.store, sessionID, createInWrite, lease, a.checkpoint(sessionID, st)),
		done:      make([]chan struct{}, len(calls)),
		results:   make([]*runtime.Result, len(calls)),
		logged:    make([]bool, len(calls)),
	}
	// The contexts the last step's results carried open this one; they go
	// with its first write.
	if err := r.hold("contexts", contextEntries(st.Pending)...); err != nil {
		a.endLease(lease, unlock)
		return StepResult{}, nil, err
	}
	r.turn, r.step = st.next()
	r.cond = sync.NewCond(&r.mu)
	for i := range r.done {
		r.done[i] = make(chan struct{})
	}
	out := r.run(ctx, bridge.Tee(&sink{a: a, w: r.w}, o.also))
	// Nothing of the step leaves the process before its log is durable: the
	// caller waits on the gate, and the state this process keeps of the
	// session follows the writes once they have resolved.
	gopool.Go(func() {
		if err := r.w.durable(logCtx); err == nil {
			if written, ok := r.w.written(); ok {
				st.applyOwn(written)
			}
		}
		a.endLease(lease, unlock)
	})
	return out, &Gate{w: r.w}, r.failure()
}

// stepState returns the session's log state for a step, checking that the
// calls' ids are new in the session.
func (a *Agent) stepState(ctx context.Context, sessionID string, calls []ToolCall, o stepOptions) (*logState, error) {
	st, err := a.logState(ctx, sessionID, o.create)
	if err != nil {
		return nil, fmt.Errorf("agent: session %q: %w", sessionID, err)
	}
	if !o.minted { // minted ids are unique by NewID's contract: the store's index need not be asked
		if id, err := a.usedCallID(ctx, sessionID, st, calls); err != nil {
			return nil, fmt.Errorf("agent: session %q: %w", sessionID, err)
		} else if id != "" {
			return nil, fmt.Errorf("%w: call id %q was already used in session %q", ErrInvalidCalls, id, sessionID)
		}
	}
	for id := range st.Suspended {
		return nil, fmt.Errorf("%w: run %q of session %q waits for approval; its result comes once it is answered", ErrSuspended, id, sessionID)
	}
	if err := ctx.Err(); err != nil {
		return nil, err // nothing appended yet: the caller is gone
	}
	return st, nil
}

// MaxCallIDBytes bounds a tool call's id: every nested event of the call
// repeats it three times (root, parent and sub-call id), so an id is a cost
// multiplied by the calls a program makes. Providers' ids are a few dozen
// bytes.
const MaxCallIDBytes = 256

// checkCalls rejects what the log could not record faithfully, and ids
// longer than MaxCallIDBytes.
func checkCalls(calls []ToolCall) error {
	seen := make(map[string]bool, len(calls))
	for i, c := range calls {
		switch {
		case c.ID == "":
			return fmt.Errorf("%w: tool call %d has no id", ErrInvalidCalls, i+1)
		case len(c.ID) > MaxCallIDBytes:
			return fmt.Errorf("%w: tool call %d's id is %d bytes; at most %d", ErrInvalidCalls, i+1, len(c.ID), MaxCallIDBytes)
		case !utf8.ValidString(c.ID) || !utf8.ValidString(c.Name) || !utf8.ValidString(c.Arguments):
			return fmt.Errorf("%w: tool call %d is not valid UTF-8", ErrInvalidCalls, i+1)
		case seen[c.ID]:
			return fmt.Errorf("%w: duplicate tool call id %q", ErrInvalidCalls, c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}

// contextEntries are the user/context events committing pending contexts,
// in FIFO order.
func contextEntries(pending []pendingContext) []entry {
	entries := make([]entry, len(pending))
	for i, p := range pending {
		entries[i] = entry{session.TypeUserContext, session.UserContext{
			Source: p.Ctx.Source, Text: p.Ctx.Text, Content: p.Ctx.Content, CallID: p.CallID,
		}}
	}
	return entries
}

// stepRun is one step in flight.
type stepRun struct {
	a          *Agent
	sessionID  string
	scope      string
	turn, step int
	calls      []ToolCall
	codeEntry  bool
	timeout    time.Duration      // stepOptions.timeout
	holdFor    time.Duration      // stepOptions.hold
	logCtx     context.Context    // appends outlive the caller's cancellation
	requestID  string             // recorded in every tool/call (requestid.From the caller's context)
	abort      context.CancelFunc // cancels every call after a store failure
	w          *logWriter         // the step's writes, in order

	done []chan struct{} // done[i] is closed when call i has its result

	mu       sync.Mutex
	cond     *sync.Cond        // signalled when appended grows
	results  []*runtime.Result // by call index; guarded by mu
	logged   []bool            // call i's tool/call is in the log; guarded by mu
	appended int               // results 0..appended-1 are handled; guarded by mu
	// lastExclusive is one past the last exclusive call started so far;
	// guarded by mu.
	lastExclusive int
	err           error // the first store failure; guarded by mu
}

// run executes the calls on a batch and appends their results in order.
func (r *stepRun) run(ctx context.Context, sink bridge.EventSink) StepResult {
	// The batch does not inherit the caller's cancellation: when the caller
	// goes away, Close first abandons the calls not yet started and only
	// then cancels the ones in flight, so no call slips from "queued" to
	// "started" because an earlier one was cancelled.
	bctx, abort := context.WithCancel(context.WithoutCancel(ctx))
	r.abort = abort
	b := r.a.rt.NewBatch(bctx, runtime.BatchOptions{Window: r.a.opts.MaxParallel, InOrder: true})
	// The calls start together once submitted; a step of one call (a run)
	// runs it on this goroutine, which would only wait for it.
	b.Hold()
	stopCaller := context.AfterFunc(ctx, b.Close)
	stopAbort := context.AfterFunc(bctx, b.Close)
	defer func() {
		stopCaller()
		stopAbort()
		b.Close()
		abort()
	}()

	approver := &approver{a: r.a, sessionID: r.sessionID, w: r.w}
	for i, c := range r.calls {
		_, ok := b.Go(runtime.Request{
			CallID: c.ID, Name: c.Name, Arguments: c.Arguments,
			Scope: r.scope, SessionID: r.sessionID,
			Approver: approver, CodeEntry: r.codeEntry,
			Run: runtime.RunOptions{Timeout: r.timeout, Events: sink, Hold: r.holdFor},
		}, runtime.Hooks{
			Start: func(_ int, call runtime.Call, safe bool) { r.start(i, call, safe) },
			Done:  func(_ int, res *runtime.Result) { r.finish(i, res) },
		})
		if !ok {
			break // closed: the caller went away; the rest never start
		}
	}
	b.Release(true, nil)
	drained := make(chan struct{})
	go func() { b.Wait(); close(drained) }()

	out := StepResult{Results: make([]CallResult, len(r.calls))}
	for i, c := range r.calls {
		select {
		case <-r.done[i]:
		case <-drained: // every Done hook has run: a missing result never started
		}
		r.mu.Lock()
		res := r.results[i]
		r.mu.Unlock()
		if res == nil {
			res = neverStarted(c)
			r.logAbandoned(c, res)
		} else {
			r.logResult(i, res)
		}
		r.mu.Lock()
		r.appended = i + 1
		r.cond.Broadcast()
		r.mu.Unlock()
		out.Results[i] = CallResult{ToolCallID: c.ID, Result: res}
		out.Contexts = append(out.Contexts, res.Contexts()...)
		out.ConcludesTurn = out.ConcludesTurn || res.ConcludesTurn()
	}
	return out
}

// start is call i's Hooks.Start: it writes the tool/call before the call
// enters the pipeline. First it waits for the results the log must show
// before this call: an exclusive call waits for every earlier result and a
// safe call for the results up to the last exclusive call before it, so the
// log shows an exclusive call as the barrier it is. (The batch already runs
// them so; this only orders the writes. Start hooks run in call order, so
// lastExclusive is up to date.) The tool/call of a tool that may have
// effects is durable before the call runs (write-ahead for effects); that of
// a read-only tool, or of run_code (whose sub-calls write ahead for
// themselves), goes with the next write. A call that cannot be logged must
// not run: the step is aborted at once, so the pipeline's gate stops this
// call and the batch abandons the rest.
func (r *stepRun) start(i int, call runtime.Call, safe bool) {
	r.mu.Lock()
	barrier := r.lastExclusive
	if !safe {
		barrier, r.lastExclusive = i, i+1
	}
	for r.appended < barrier {
		r.cond.Wait()
	}
	r.mu.Unlock()
	c := r.calls[i]
	ev := entry{session.TypeToolCall, r.callPayload(c)}
	var err error
	if call.Tool == nil || call.Tool.Hints().ReadOnly || c.Name == registry.RunCode {
		err = r.hold("tool/call", ev) // nil Tool: the gate refuses it, nothing runs
	} else {
		_, err = r.commit("tool/call", ev)
	}
	if err != nil {
		r.fail(err)
		return
	}
	r.mu.Lock()
	r.logged[i] = true
	r.mu.Unlock()
}

// finish is call i's Hooks.Done.
func (r *stepRun) finish(i int, res *runtime.Result) {
	r.mu.Lock()
	r.results[i] = res
	r.mu.Unlock()
	close(r.done[i])
}

func (r *stepRun) callPayload(c ToolCall) session.ToolCall {
	return session.ToolCall{Turn: r.turn, Step: r.step, CallID: c.ID, Name: c.Name, Arguments: c.Arguments, RequestID: r.requestID}
}

// logResult appends call i's tool/result, unless its tool/call is not in
// the log (a result without a call would be an orphan).
func (r *stepRun) logResult(i int, res *runtime.Result) {
	r.mu.Lock()
	logged := r.logged[i]
	r.mu.Unlock()
	if !logged || res.Code() == registry.CodeSuspended {
		return // a suspended run's call stays open: it resumes (Resume)
	}
	if err := r.submit("tool/result", entry{session.TypeToolResult, session.ToolResultOf(r.calls[i].ID, res)}); err != nil {
		r.fail(err)
	}
}

// logAbandoned appends the synthetic pair of a call that never started, in
// one append so that the log never holds one without the other.
func (r *stepRun) logAbandoned(c ToolCall, res *runtime.Result) {
	err := r.submit("aborted call",
		entry{session.TypeToolCall, r.callPayload(c)},
		entry{session.TypeToolResult, session.ToolResultOf(c.ID, res)})
	if err != nil {
		r.fail(err)
	}
}

// hold queues entries for the step's next write.
func (r *stepRun) hold(what string, entries ...entry) error {
	events, err := entriesEvents(what, entries...)
	if err == nil {
		r.w.hold(events...)
	}
	return err
}

// submit queues entries as a write of their own, without waiting.
func (r *stepRun) submit(what string, entries ...entry) error {
	events, err := entriesEvents(what, entries...)
	if err == nil {
		r.w.submit(r.logCtx, events...)
	}
	return err
}

// commit writes entries and waits until the step's log so far is durable.
func (r *stepRun) commit(what string, entries ...entry) ([]session.Event, error) {
	events, err := entriesEvents(what, entries...)
	if err != nil {
		return nil, err
	}
	return r.w.commit(r.logCtx, events...)
}

// fail records a store failure and stops the step.
func (r *stepRun) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
	r.abort()
}

func (r *stepRun) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// neverStarted returns the ABORTED_BEFORE_DISPATCH result of a call that
// never started.
func neverStarted(c ToolCall) *runtime.Result {
	return runtime.NotStarted(c.ID, c.Name, fmt.Sprintf("%s was cancelled before dispatch: the step was cancelled before this call started", c.Name))
}

// collector gathers the settled SDK calls of one run for Run's caller,
// within a byte budget for their arguments and content, so that a run of
// many large calls does not hold them all in memory.
type collector struct {
	budget int

	mu               sync.Mutex
	calls            []session.CodeDispatch // guarded by mu
	used             int                    // bytes of kept arguments and content; guarded by mu
	trimmed, omitted int                    // guarded by mu
}

// trimmedBytes is what a trimmed call keeps of its arguments and of its
// content text.
const trimmedBytes = 512

func (c *collector) DispatchStarted(context.Context, session.CodeDispatchStart) func(context.Context) error {
	return nil
}

func (c *collector) DispatchSettled(_ context.Context, d session.CodeDispatch) {
	// What replaying needs stays in the log; the reply has the call's wire form.
	d.Journal, d.Value, d.Thrown, d.Contexts, d.ConcludesTurn = "", nil, nil, nil, false
	c.mu.Lock()
	defer c.mu.Unlock()
	size := callBytes(d)
	if c.used+size > c.budget {
		d = trimCall(d)
		c.trimmed++
		if size = callBytes(d); c.used+size > c.budget {
			c.trimmed--
			c.omitted++
			return
		}
	}
	c.used += size
	c.calls = append(c.calls, d)
}

// report returns the run's report, the calls in submission order.
func (c *collector) report(res *runtime.Result) *RunReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.calls)
	slices.SortStableFunc(out, func(x, y session.CodeDispatch) int { return x.Number - y.Number })
	return &RunReport{Result: res, Calls: out, Trimmed: c.trimmed, Omitted: c.omitted}
}

func callBytes(d session.CodeDispatch) int {
	n := len(d.Arguments)
	for _, b := range d.Content {
		n += len(b.Text) + len(b.Data)
	}
	return n
}

// trimCall cuts a call's arguments and content to trimmedBytes each, with
// markers; the log keeps them whole.
func trimCall(d session.CodeDispatch) session.CodeDispatch {
	if len(d.Arguments) > trimmedBytes {
		marker, _ := json.Marshal(map[string]any{"truncated": fmt.Sprintf("%d bytes of arguments; the session log has them whole", len(d.Arguments))})
		d.Arguments = marker
	}
	content := make([]registry.ContentBlock, 0, len(d.Content))
	for _, b := range d.Content {
		switch {
		case b.IsImage():
			b = registry.Text(fmt.Sprintf("[image, %d bytes; the session log has it]", len(b.Data)))
		case len(b.Text) > trimmedBytes:
			cut := trimmedBytes
			for cut > 0 && !utf8.RuneStart(b.Text[cut]) {
				cut--
			}
			b.Text = b.Text[:cut] + fmt.Sprintf("… [%d more bytes; the session log has them]", len(b.Text)-cut)
		}
		content = append(content, b)
	}
	d.Content = content
	return d
}
