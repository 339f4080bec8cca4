package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
)

// Runtime executes tool calls against a registry through the pipeline. It is
// safe for concurrent use; hooks may be added and removed at any time and
// apply to calls that start afterwards.
type Runtime struct {
	reg   *registry.Registry
	trace func(Stage, Call)

	mu        sync.RWMutex
	nextID    uint64
	global    *hookSet  // every hook, when none is scoped (nil otherwise); read-only
	gen       *hooksGen // replaced on every change: the key of the hooks memoized on views
	pre       []scoped[PrePolicy]
	guards    []scoped[Guard]
	around    []scoped[Around]
	post      []scoped[PostPolicy]
	observers []scoped[Observer]
	nesting   NestingBody // SetNestingBody
}

type scoped[T any] struct {
	id    uint64
	scope string // registry.Global: every call
	fn    T
}

// Options configure a Runtime. The zero value works.
type Options struct {
	// Trace, when set, is called as each stage begins. Tests mount an
	// invariant checker here; it must not block.
	Trace func(Stage, Call)
}

// New returns a runtime over reg.
func New(reg *registry.Registry, opts Options) *Runtime {
	rt := &Runtime{reg: reg, trace: opts.Trace}
	rt.rebuildLocked()
	return rt
}

// Registry returns the registry the runtime resolves tools in.
func (rt *Runtime) Registry() *registry.Registry { return rt.reg }

func add[T any](rt *Runtime, list *[]scoped[T], scope string, fn T) (remove func()) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.nextID++
	id := rt.nextID
	*list = append(slices.Clip(*list), scoped[T]{id: id, scope: scope, fn: fn})
	rt.rebuildLocked()
	return func() {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		*list = slices.DeleteFunc(slices.Clone(*list), func(s scoped[T]) bool { return s.id == id })
		rt.rebuildLocked()
	}
}

// rebuildLocked caches the hook set every call shares while no hook is
// scoped, so that unscoped runtimes pick nothing per call.
func (rt *Runtime) rebuildLocked() {
	rt.gen = &hooksGen{}
	anyScoped := func(scopes ...[]string) bool {
		for _, list := range scopes {
			for _, s := range list {
				if s != registry.Global {
					return true
				}
			}
		}
		return false
	}
	if anyScoped(scopesOf(rt.pre), scopesOf(rt.guards), scopesOf(rt.post)) {
		rt.global = nil
		return
	}
	rt.global = &hookSet{
		pre: pick(rt.pre, nil), guards: pick(rt.guards, nil), around: pick(rt.around, nil),
		post: pick(rt.post, nil), observers: pick(rt.observers, nil),
	}
}

func scopesOf[T any](list []scoped[T]) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.scope
	}
	return out
}

// AddPrePolicy mounts a pre-policy hook. A scoped hook (scope != Global)
// gates calls in that scope and its descendants only, never calls without a
// scope. Hooks run in the order they were added.
func (rt *Runtime) AddPrePolicy(scope string, p PrePolicy) (remove func()) {
	return add(rt, &rt.pre, scope, p)
}

// AddGuard mounts an owner guard, scoped like AddPrePolicy.
func (rt *Runtime) AddGuard(scope string, g Guard) (remove func()) {
	return add(rt, &rt.guards, scope, g)
}

// AddAround mounts an around wrapper for every call; the first added is the
// outermost.
func (rt *Runtime) AddAround(a Around) (remove func()) {
	return add(rt, &rt.around, registry.Global, a)
}

// AddPostPolicy mounts a post-policy hook, scoped like AddPrePolicy.
func (rt *Runtime) AddPostPolicy(scope string, p PostPolicy) (remove func()) {
	return add(rt, &rt.post, scope, p)
}

// AddObserver mounts a result observer for every call.
func (rt *Runtime) AddObserver(o Observer) (remove func()) {
	return add(rt, &rt.observers, registry.Global, o)
}

// Request is one call to execute.
type Request struct {
	CallID    string
	Name      string
	Arguments string // the model's raw argument string, verbatim
	Scope     string
	SessionID string
	// Parent is the token of the run_code execution that issued this SDK
	// sub-call; zero for a model-direct call.
	Parent Token
	// Approver routes asks; nil means no agent, and asks fail closed.
	Approver Approver
	// CodeEntry marks a client's own entry to Code Mode (POST /v1/run): a
	// run_code call resolves even in a scope whose mode does not offer
	// run_code to its model.
	CodeEntry bool
	// View, when set, is the view the call resolves in instead of the
	// scope's live one: a nesting body's calls pass the view their parent
	// resolved in (Nesting.View), so a program calls the tools it was shown
	// even when the registry changes while it runs.
	View *registry.View
	// Run is the caller's options for a nesting body (run_code), handed to
	// it in Nesting.Run; other bodies never see them.
	Run RunOptions
	// Hold and Resumed go to the call's ask (ApprovalRequest): a run that can
	// suspend lets its calls' asks give up after Hold, and marks the calls it
	// started before it suspended as Resumed.
	Hold    time.Duration
	Resumed bool
}

// RunOptions are what the caller of a run_code call asks of the run.
type RunOptions struct {
	// Timeout replaces the body's own wall-clock limit when positive.
	Timeout time.Duration
	// Events receives the run's nested dispatch events, in the body's own
	// sink type (run_code's: bridge.EventSink); nil logs nothing.
	Events any
	// Hold, when positive, lets the run suspend: a call of it whose ask waits
	// unanswered for Hold ends the run with SUSPENDED, to be resumed by
	// replay once the ask is answered.
	Hold time.Duration
	// Resume is what an earlier execution of the call left in the log, in
	// the body's own type (run_code's: *bridge.Resume): the body replays it.
	Resume any
}

// Nesting is the handle the runtime gives a nesting body (SetNestingBody):
// what the calls it issues need from the call it runs in.
type Nesting struct {
	// Exec is the body's own call, as every body sees it.
	Exec registry.Exec
	// Parent is the call's token: the Parent of every call the body issues.
	Parent Token
	// Approver is where the call's asks go, and so its calls' asks.
	Approver Approver
	// View is the view the call resolved in: the one the body's calls
	// resolve in (Request.View), one view for the whole run.
	View *registry.View
	// Run is the caller's Request.Run.
	Run RunOptions
}

// NestingBody is the body of the tool that issues calls of its own (the
// registry's code transport, run_code).
type NestingBody func(ctx context.Context, n *Nesting, args frozen.Value) (any, error)

// SetNestingBody makes body the code transport's body: when a call
// resolves to the registry's CodeTransport tool, the runtime runs body with
// the call's Nesting instead of the tool's own Execute.
func (rt *Runtime) SetNestingBody(body NestingBody) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.nesting = body
}

// turns lets a scheduler of sibling calls (Batch) keep policy in
// submission order while bodies overlap.
type turns interface {
	// Dispatched is called exactly once per execution, when the call has
	// passed (or failed) pre-policy and guards: the next sibling may begin
	// its own pre-policy.
	Dispatched()
	// PostTurn blocks until this call may run post-policy: every earlier
	// sibling has finished.
	PostTurn()
}

// Stage names a pipeline stage (for Options.Trace).
type Stage uint8

// The stages in pipeline order.
const (
	StageIdentity Stage = iota
	StageGate
	StagePrePolicy
	StageGuards
	StageAround
	StageBody
	StagePostPolicy
	StageFinalize
	StageObservers
)

var stageNames = [...]string{"identity", "gate", "pre-policy", "guards", "around", "body", "post-policy", "finalize", "observers"}

func (s Stage) String() string {
	if int(s) < len(stageNames) {
		return stageNames[s]
	}
	return fmt.Sprintf("stage(%d)", s)
}

// execution is one call in flight; it implements registry.Exec.
type execution struct {
	rt        *Runtime
	call      Call
	token     tokenState    // what call.Token points at
	approver  Approver      // Request.Approver
	run       RunOptions    // Request.Run
	hold      time.Duration // Request.Hold
	resumed   bool          // Request.Resumed
	sequencer turns         // set by a Batch
	callerCtx context.Context
	view      *registry.View        // resolved once, at identity; nil when the scope is unknown
	viewErr   error                 // why view is nil
	finalize  registry.FinalizeFunc // captured at identity
	argsErr   error                 // the arguments' parse or validation failure, found once at identity
	safe      bool                  // the concurrency verdict, decided once at identity
	sequenced bool                  // sequencer.Dispatched was called
	ran       bool                  // Run was called

	mu        sync.Mutex
	contexts  []registry.Context // tool-deferred; guarded by mu
	concludes bool               // guarded by mu
	started   bool               // the body ran; guarded by mu
}

func (e *execution) CallID() string    { return e.call.CallID }
func (e *execution) SessionID() string { return e.call.SessionID }
func (e *execution) Scope() string     { return e.call.Scope }
func (e *execution) Nested() bool      { return e.call.Nested() }

// IdempotencyKey is "cm1-" and the first 128 bits of the SHA-256 of the
// session and call ids, in hex: stable for a call id, and telling nothing
// of either id.
func (e *execution) IdempotencyKey() string {
	if e.call.CallID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(e.call.SessionID + "\x00" + e.call.CallID))
	return "cm1-" + hex.EncodeToString(sum[:16])
}

func (e *execution) DeferContext(text string) {
	e.mu.Lock()
	e.contexts = append(e.contexts, registry.Context{Source: e.call.Name, Text: text})
	e.mu.Unlock()
}

func (e *execution) Defer(c registry.Context) {
	c.Content = registry.CloneContent(c.Content)
	e.mu.Lock()
	e.contexts = append(e.contexts, c)
	e.mu.Unlock()
}

func (e *execution) ConcludeTurn() {
	e.mu.Lock()
	e.concludes = true
	e.mu.Unlock()
}

func (e *execution) deferred() ([]registry.Context, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.contexts), e.concludes
}

// Execute runs one call through the whole pipeline and returns its frozen
// result. It never panics and never returns nil: every failure, including a
// panic in any hook, is a result with a code. It is Prepare followed by Run.
func (rt *Runtime) Execute(ctx context.Context, req Request) *Result {
	return rt.Prepare(ctx, req).Run()
}

// Prepared is a call whose identity is fixed: its token is minted, its tool
// resolved in the live view and its arguments read, each exactly once. Every
// later stage, and a scheduler deciding whether the call may overlap others,
// uses what Prepare found; nothing is resolved or parsed again.
type Prepared struct {
	e  *execution // &x
	ex execution  // one allocation for the call, its token and its request
}

// Prepare runs the identity stage of a call: it mints the token, resolves the
// tool in the scope's view as it is now (capturing finalizeContent), parses
// the raw argument string losslessly and freezes it, validates it against the
// tool's parameters (Define tools) and classifies the call's concurrency. A
// failure here is reported when the call runs, at the stage it belongs to.
func (rt *Runtime) Prepare(ctx context.Context, req Request) *Prepared {
	p := &Prepared{}
	e := &p.ex
	p.e = e
	*e = execution{
		rt:        rt,
		approver:  req.Approver,
		run:       req.Run,
		hold:      req.Hold,
		resumed:   req.Resumed,
		callerCtx: ctx,
		call: Call{
			Parent:    req.Parent,
			CallID:    req.CallID,
			Name:      req.Name,
			Scope:     req.Scope,
			SessionID: req.SessionID,
			Started:   time.Now(),
		},
	}
	e.token.e = e
	e.call.Token = Token{p: &e.token}
	if req.View != nil {
		e.view = req.View
	} else {
		e.view, e.viewErr = rt.resolve(req.Scope)
	}
	if e.view != nil {
		t, ok := e.view.Get(req.Name)
		if !ok && req.CodeEntry && req.Name == registry.RunCode && req.Parent.IsZero() {
			t = rt.reg.CodeTransport()
			ok = t != nil
		}
		if ok {
			e.call.Tool = t
			e.finalize = t.Finalizer()
		}
	}
	if e.argsErr = rt.parseArgs(e, req.Arguments); e.argsErr == nil && e.call.Tool != nil {
		if e.argsErr = e.call.Tool.CheckArgs(e.call.Args); e.argsErr == nil {
			e.safe = e.call.Tool.ClassifyChecked(e.call.Args)
		}
	}
	return p
}

// Call is what the stages will see of the call.
func (p *Prepared) Call() Call { return p.e.call }

// ConcurrencySafe reports the call's concurrency verdict: only an exact true
// from the resolved tool's classifier on valid arguments means it may overlap
// other calls.
func (p *Prepared) ConcurrencySafe() bool { return p.e.safe }

// Run runs the rest of the pipeline, stage by stage, and returns the frozen
// result. It runs at most once; a second call returns an INTERNAL failure.
func (p *Prepared) Run() *Result {
	e := p.e
	if e.ran {
		return NotStarted(e.call.CallID, e.call.Name, "internal error: the call was already run")
	}
	e.ran = true
	rt := e.rt
	rt.traceStage(StageIdentity, e)
	hooks := rt.hooksFor(e.view)

	out, ok := rt.admit(e, hooks) // arguments, gate, pre-policy, guards
	if ok {
		rt.dispatched(e)
		out = rt.dispatch(e, hooks) // around wrappers and the body
		if e.sequencer != nil {
			e.sequencer.PostTurn()
		}
		out = rt.postPolicy(e, hooks, out)
	}
	rt.dispatched(e)
	res := rt.finalizeResult(e, out)
	rt.observe(e, hooks, res)
	return res
}

// admit runs the stages before dispatch, each of which can only refuse the
// call; ok means it may be dispatched, otherwise out is the refusal.
func (rt *Runtime) admit(e *execution, hooks hookSet) (out pending, ok bool) {
	refusal := rt.argumentsReadable(e)
	if refusal == nil {
		refusal = rt.gate(e)
	}
	if refusal == nil {
		refusal = rt.prePolicy(e, hooks)
	}
	if refusal == nil {
		refusal = rt.guard(e, hooks)
	}
	if refusal != nil {
		return failed(refusal), false
	}
	return pending{}, true
}

// resolve returns the scope's view as it is now.
func (rt *Runtime) resolve(scope string) (*registry.View, error) {
	if testHookResolve != nil {
		testHookResolve()
	}
	return rt.reg.View(scope)
}

// Test hooks counting the per-call work that must happen exactly once.
var testHookResolve, testHookParse func()

// dispatched tells the sequencer, once, that pre-dispatch stages are over.
func (rt *Runtime) dispatched(e *execution) {
	if e.sequencer != nil && !e.sequenced {
		e.sequenced = true
		e.sequencer.Dispatched()
	}
}

// pending is a result being normalized.
type pending struct {
	value    frozen.Value
	content  []registry.ContentBlock
	err      *ErrorInfo
	meta     frozen.Value
	contexts []registry.Context // wrapper and post-policy contexts
	dropTool bool               // blocked: tool-deferred contexts are dropped
}

func failed(err error) pending {
	info, content := normalize(err, registry.CodeInternal)
	return pending{err: info, content: content}
}

// hookSet is the hooks that apply to one call, snapshotted at its start.
type hookSet struct {
	pre       []PrePolicy
	guards    []Guard
	around    []Around
	post      []PostPolicy
	observers []Observer
}

// hooksFor picks the hooks of a call resolved in view (nil: an unknown
// scope, which only global hooks see).
func (rt *Runtime) hooksFor(view *registry.View) hookSet {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	if g := rt.global; g != nil {
		return *g
	}
	build := func() any {
		return &hookSet{
			pre:       pick(rt.pre, view),
			guards:    pick(rt.guards, view),
			around:    pick(rt.around, view),
			post:      pick(rt.post, view),
			observers: pick(rt.observers, view),
		}
	}
	if view == nil {
		return *build().(*hookSet)
	}
	// A view's chain never changes: its hooks are picked once per
	// generation of the hooks.
	return *view.Memo(rt.gen, build).(*hookSet)
}

// hooksGen is one generation of a runtime's hooks; it keys the hook set
// picked for a view.
type hooksGen struct{ _ byte }

// pick keeps global hooks and hooks of a scope on the chain of the call's
// view (nil: global hooks only).
func pick[T any](list []scoped[T], view *registry.View) []T {
	out := make([]T, 0, len(list))
	for _, s := range list {
		if s.scope == registry.Global || (view != nil && view.Within(s.scope)) {
			out = append(out, s.fn)
		}
	}
	return out
}

func (rt *Runtime) traceStage(s Stage, e *execution) {
	if rt.trace != nil {
		rt.trace(s, e.call)
	}
}

// parseArgs reads the raw argument string once: parsed losslessly and
// frozen. A failure here wins over an already-cancelled caller.
func (rt *Runtime) parseArgs(e *execution, raw string) error {
	if testHookParse != nil {
		testHookParse()
	}
	if raw == "" {
		raw = "{}"
	}
	v, err := frozen.ParseString(raw)
	if err != nil {
		return &registry.Error{Code: registry.CodeInvalidArgs, Message: fmt.Sprintf("arguments for %s are not valid JSON%s", e.call.Name, strings.TrimPrefix(err.Error(), "invalid JSON"))}
	}
	e.call.Args = v
	return nil
}

// argumentsReadable refuses arguments that could not be parsed: that
// failure wins over everything after it, an already-cancelled caller
// included. (Arguments that parse but fail validation are reported before
// an ask reaches a person, by invalidBeforeAsk, or else when the body would
// run.)
func (rt *Runtime) argumentsReadable(e *execution) *registry.Error {
	if e.argsErr != nil && e.call.Args.IsZero() {
		return asRegistryError(e.argsErr)
	}
	return nil
}

// gate: a cancelled caller dispatches nothing; an unknown tool fails; in a
// code-only scope a model-direct call of anything but run_code fails before
// any policy runs.
func (rt *Runtime) gate(e *execution) *registry.Error {
	rt.traceStage(StageGate, e)
	switch {
	case e.callerCtx.Err() != nil:
		return cancelledBeforeDispatch(e)
	case e.view == nil:
		return &registry.Error{Code: registry.CodeUnknownTool, Message: fmt.Sprintf("unknown tool %q: %s", e.call.Name, registry.SafeString(e.viewErr))}
	case e.call.Tool == nil:
		return &registry.Error{Code: registry.CodeUnknownTool, Message: fmt.Sprintf("unknown tool %q", e.call.Name)}
	case !e.call.Nested() && !e.view.DirectlyCallable(e.call.Name):
		return &registry.Error{Code: registry.CodeUnknownTool, Message: fmt.Sprintf(
			"tool %q cannot be called directly in this scope (code mode); call it inside a %s program: await tools[%q](args)",
			e.call.Name, registry.RunCode, e.call.Name)}
	case e.call.Nested() && e.call.Name == registry.RunCode:
		return &registry.Error{Code: registry.CodeUnknownTool, Message: "run_code cannot be called from inside a program"}
	}
	return nil
}

func cancelledBeforeDispatch(e *execution) *registry.Error {
	return &registry.Error{Code: registry.CodeAbortedBeforeDispatch, Message: fmt.Sprintf("%s was cancelled before dispatch: %s", e.call.Name, registry.SafeString(context.Cause(e.callerCtx)))}
}

// prePolicy runs the pre hooks in order; an ask goes to the approver. A
// hook's structured error keeps its code.
func (rt *Runtime) prePolicy(e *execution, p hookSet) *registry.Error {
	rt.traceStage(StagePrePolicy, e)
	for _, hook := range p.pre {
		d, err := callPre(hook, e.callerCtx, e.call)
		if err != nil {
			if re := asRegistryError(err); re != nil {
				return re
			}
			return &registry.Error{Code: registry.CodeInternal, Message: "pre-policy failed: " + registry.SafeString(err)}
		}
		switch d.kind {
		case decideDeny:
			return &registry.Error{Code: registry.CodeDenied, Message: orDefault(d.reason, "denied by policy")}
		case decideAsk:
			if refusal := rt.invalidBeforeAsk(e, p); refusal != nil {
				return refusal
			}
			if refusal := rt.ask(e, d.reason); refusal != nil {
				return refusal
			}
		}
	}
	if e.callerCtx.Err() != nil {
		return cancelledBeforeDispatch(e)
	}
	return nil
}

func callPre(hook PrePolicy, ctx context.Context, c Call) (d Decision, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = Decision{}, &registry.PanicError{Where: "pre-policy", Value: r}
		}
	}()
	return hook(ctx, c)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// invalidBeforeAsk refuses, before an ask reaches a person, a call whose
// arguments fail the tool's schema: nobody is asked to approve a call that
// cannot run. An owner guard's veto still wins (its reason, not the tool's
// schema, is what the caller learns of a vetoed tool), so the guards are
// consulted first; they run again at their own stage for calls that pass.
func (rt *Runtime) invalidBeforeAsk(e *execution, p hookSet) *registry.Error {
	if e.argsErr == nil {
		return nil
	}
	if veto := rt.guard(e, p); veto != nil {
		return veto
	}
	if re := asRegistryError(e.argsErr); re != nil {
		return re
	}
	return &registry.Error{Code: registry.CodeInvalidArgs, Message: registry.SafeString(e.argsErr)}
}

// ask routes an ask to the approver; with none (no agent) it fails closed.
func (rt *Runtime) ask(e *execution, reason string) *registry.Error {
	deny := func(code registry.Code, msg string) *registry.Error {
		return &registry.Error{Code: code, Message: msg}
	}
	if e.approver == nil {
		return deny(registry.CodeDenied, fmt.Sprintf("%s needs approval (%s) and there is no one to ask", e.call.Name, orDefault(reason, "policy asked")))
	}
	ans := safeApprove(e.approver, e.callerCtx, ApprovalRequest{Call: e.call, Reason: reason, Hold: e.hold, Resumed: e.resumed})
	if err := e.callerCtx.Err(); err != nil {
		return deny(registry.CodeAbortedBeforeDispatch, fmt.Sprintf("%s was cancelled while waiting for approval", e.call.Name))
	}
	switch ans.Outcome {
	case ApprovalAllowOnce:
		return nil
	case ApprovalRejected:
		return deny(registry.CodeApprovalRejected, orDefault(ans.Reason, "the user rejected this call"))
	case ApprovalCancelled:
		return deny(registry.CodeDenied, orDefault(ans.Reason, "the approval was cancelled"))
	case ApprovalSuspended:
		return deny(registry.CodeSuspended, fmt.Sprintf("%s waits for approval: its run suspends until the ask is answered", e.call.Name))
	default:
		return deny(registry.CodeDenied, orDefault(ans.Reason, "nobody answered the approval request"))
	}
}

func safeApprove(a Approver, ctx context.Context, req ApprovalRequest) (ans ApprovalAnswer) {
	defer func() {
		if recover() != nil {
			ans = ApprovalAnswer{Outcome: ApprovalNone, Reason: "the approver failed"}
		}
	}()
	return a.Approve(ctx, req)
}

// guard runs owner guards; any veto (or a panic) is final.
func (rt *Runtime) guard(e *execution, p hookSet) *registry.Error {
	rt.traceStage(StageGuards, e)
	for _, g := range p.guards {
		if veto := callGuard(g, e.callerCtx, e.call); veto != "" {
			return &registry.Error{Code: registry.CodeDenied, Message: veto}
		}
	}
	return nil
}

func callGuard(g Guard, ctx context.Context, c Call) (veto string) {
	defer func() {
		if r := recover(); r != nil {
			veto = "guard failed: " + registry.SafeString(r)
		}
	}()
	return g(ctx, c)
}
