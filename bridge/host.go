package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/codemode/codemode/internal/bytesize"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/session"
)

// run is one program's set of sub-calls: the sandbox.Host over a batch.
type run struct {
	batch    *runtime.Batch
	abort    context.CancelCauseFunc // stops every sub-call: the log failed
	logCtx   context.Context         // events are logged even after cancellation
	exec     registry.Exec
	parent   runtime.Token
	approver runtime.Approver
	sink     EventSink
	view     *registry.View

	// settling is held while one sub-call logs its settlement and settles
	// its promise, so the log's order of settlements is the order in which
	// the program sees them.
	settling sync.Mutex

	maxValueBytes   int // a sub-call's value bigger than this is refused
	maxContentBytes int // a settlement event's content is cut beyond this

	notices notices // what sub-calls reported while they ran

	subID func(n int) string // the CallID of sub-call n

	// Suspension and replay (replay.go).
	hold        time.Duration           // runtime.RunOptions.Hold: 0, the run never suspends
	resume      *Resume                 // runtime.RunOptions.Resume: the execution it replays
	journal     journalPieces           // the program's journal, until logged
	programCtx  context.Context         // the program's run: stopped to suspend or on divergence
	stopProgram context.CancelCauseFunc // stops it
	stopMu      sync.Mutex
	waiting     []string // sub-calls that suspended the run; guarded by stopMu
	divergence  string   // how the program diverged from the log; guarded by stopMu

	mu sync.Mutex
	// calls[n-1] is sub-call n: the batch numbers calls 1, 2, … in
	// submission order, and only Call submits, holding mu. Guarded by mu.
	calls []*subCall
}

// subCall is what the run knows of one sub-call: for reporting the ones a
// program left unfinished, its dispatch-start event and its result.
type subCall struct {
	name          string
	line          int
	started, done bool // guarded by the run's mu

	// What the run's result carries of it, set when done; guarded by the
	// run's mu.
	tool      string
	contexts  []registry.Context
	images    []registry.ContentBlock
	concludes bool

	// Written by the Start hook and read by Done, on the call's goroutine.
	start     session.CodeDispatchStart
	startedAt time.Time
}

func (b *Bridge) newRun(ctx context.Context, n *runtime.Nesting) *run {
	exec := n.Exec
	sink, _ := n.Run.Events.(EventSink)
	logCtx := context.WithoutCancel(ctx)
	ctx, abort := context.WithCancelCause(ctx)
	r := &run{
		abort:  abort,
		logCtx: logCtx,
		exec:   exec, approver: n.Approver, sink: sink, view: n.View, parent: n.Parent,
		maxValueBytes: b.opts.MaxSubCallBytes, maxContentBytes: b.opts.MaxContentBytes,
		notices: notices{limit: max(b.opts.Limits.WithDefaults().MaxLogBytes/4, 1<<10)},
	}
	prefix := exec.CallID() + ":code:"
	r.subID = func(n int) string { return prefix + strconv.Itoa(n) }
	if canSuspend(sink) {
		r.hold = n.Run.Hold
	}
	r.resume, _ = n.Run.Resume.(*Resume)
	r.programCtx, r.stopProgram = ctx, func(error) {}
	if r.resumable() || r.resume != nil { // only these stop their program themselves
		r.programCtx, r.stopProgram = context.WithCancelCause(ctx)
	}
	// Sub-calls run under the batch's context: their notices reach the run.
	r.batch = b.rt.NewBatch(registry.WithNotifier(ctx, r), runtime.BatchOptions{Window: b.opts.MaxParallelSubCalls})
	return r
}

// Notify implements registry.Notifier for the run's sub-calls: a notice is
// logged as a tool/notice event at once and kept as a line for the run's
// logs.
func (r *run) Notify(_ context.Context, n registry.Notice) {
	if ns, ok := r.sink.(NoticeSink); ok {
		ns.Noticed(r.logCtx, session.ToolNotice{
			RootCallID: r.exec.CallID(), CallID: n.CallID, Tool: n.Tool, Kind: string(n.Kind),
			Progress: n.Progress, Total: n.Total, Message: n.Message, Level: n.Level, Logger: n.Logger, Data: n.Data,
		})
	}
	r.notices.add(noticeLine(n))
}

// notices are the log lines of a run's notices, within a byte budget.
type notices struct {
	limit int

	mu      sync.Mutex
	lines   []string // guarded by mu
	bytes   int      // guarded by mu
	dropped int      // lines left out past the limit; guarded by mu
}

func (ns *notices) add(line string) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.bytes+len(line)+1 > ns.limit {
		ns.dropped++
		return
	}
	ns.lines = append(ns.lines, line)
	ns.bytes += len(line) + 1
}

// logs returns the lines to follow the program's own logs.
func (ns *notices) logs() []string {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	out := slices.Clone(ns.lines)
	if ns.dropped > 0 {
		out = append(out, fmt.Sprintf("[%d more tool notices were left out]", ns.dropped))
	}
	return out
}

// noticeLine renders a notice for the run's logs: "[tool progress 2/5] message"
// or "[tool warning] message".
func noticeLine(n registry.Notice) string {
	var head, text string
	switch n.Kind {
	case registry.NoticeProgress:
		head = fmt.Sprintf("progress %s", trimFloat(n.Progress))
		if n.Total > 0 {
			head += "/" + trimFloat(n.Total)
		}
		text = n.Message
	default:
		head = n.Level
		if n.Logger != "" {
			head += " " + n.Logger
		}
		text = string(n.Data)
		var s string
		if json.Unmarshal(n.Data, &s) == nil {
			text = s
		}
	}
	line := "[" + n.Tool + " " + head + "]"
	if text != "" {
		line += " " + text
	}
	if len(line) > maxNoticeLine {
		cut := maxNoticeLine
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut] + "…"
	}
	return line
}

// maxNoticeLine bounds one notice's log line.
const maxNoticeLine = 500

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// errorMessage is what the program's ToolCallError says of a failed call: the pipeline's
// message and, for arguments the tool refused, the signature it expects (from the SDK), so
// the fix is in the message.
func (r *run) errorMessage(name string, res *runtime.Result) string {
	msg := res.Error().Message
	if res.Code() == registry.CodeInvalidArgs {
		if sig, ok := Signature(r.view, name); ok {
			msg += "; its signature: " + sig
		}
	}
	return msg
}

// Has implements sandbox.Host: the tools of the view as the run started;
// run_code is never one.
func (r *run) Has(name string) bool {
	return r.view.HasSDKTool(name) || r.resume != nil && r.resume.called(name)
}

// Names implements sandbox.Host.
func (r *run) Names() []string { return r.view.Names() }

// Call implements sandbox.Host: it submits a sub-call and returns at once.
// A resumed run answers the calls its earlier execution settled from the log
// (replay.go).
func (r *run) Call(c sandbox.Call, settle func(sandbox.Settlement)) {
	if r.resumable() {
		r.journal.add(c.Journal)
	}
	if sandbox.IsDiscovery(c.Name) {
		settle(r.discover(c))
		return
	}
	if r.batch.Context().Err() != nil || r.stopping() {
		settle(sandbox.Settlement{Err: &sandbox.CallError{ToolName: c.Name, Message: "run_code was cancelled; the call was not dispatched"}})
		return
	}
	sc := &subCall{name: c.Name, line: c.Line}
	// Held until the call is recorded, so that calls stays in submission
	// order.
	r.mu.Lock()
	defer r.mu.Unlock()
	num := len(r.calls) + 1
	logged, replayed := r.replay(num, c, sc, settle)
	if replayed {
		r.calls = append(r.calls, sc)
		return
	}
	_, ok := r.batch.Go(runtime.Request{
		Name:      c.Name,
		Arguments: string(c.Args),
		Scope:     r.exec.Scope(),
		SessionID: r.exec.SessionID(),
		Parent:    r.parent,
		Approver:  r.approver,
		View:      r.view,
		Hold:      r.hold,
		Resumed:   logged != nil,
	}, runtime.Hooks{
		CallID: r.callID(num),
		Start: func(_ int, call runtime.Call, _ bool) {
			r.mu.Lock()
			sc.started = true
			r.mu.Unlock()
			sc.startedAt = time.Now()
			if logged != nil { // its start is in the log already
				sc.start = *logged
				return
			}
			sc.start = session.CodeDispatchStart{RootCallID: r.exec.CallID(), ParentCallID: r.exec.CallID(), SubCallID: call.CallID, Number: num, Name: c.Name, Arguments: json.RawMessage(c.Args)}
			if r.resumable() {
				sc.start.Journal = r.journal.take()
			}
			if r.sink == nil {
				return
			}
			durable := r.sink.DispatchStarted(r.logCtx, sc.start)
			// Write-ahead for effects: a tool that may change the world runs
			// only once the record that it started is durable.
			if durable != nil && call.Tool != nil && !call.Tool.Hints().ReadOnly {
				if err := durable(r.logCtx); err != nil {
					r.abort(fmt.Errorf("the log could not record a call before it ran: %w", err))
				}
			}
		},
		Done: func(_ int, res *runtime.Result) {
			if res.Code() == registry.CodeSuspended && r.hold > 0 {
				r.suspendAt(sc) // no settlement: the call resumes with its run
				return
			}
			r.settling.Lock()
			defer r.settling.Unlock()
			s := r.settlementOf(c.Name, res)
			if r.sink != nil {
				wire := session.ResultOf(res)
				ev := session.CodeDispatch{
					CodeDispatchStart: sc.start, IsError: wire.IsError, Content: capContent(wire.Content, r.maxContentBytes), Error: wire.Error,
					StartedAt: sc.startedAt, EndedAt: time.Now(),
				}
				if r.resumable() {
					recordSettlement(&ev, s, res)
				}
				ev.Journal = ""
				r.sink.DispatchSettled(r.logCtx, ev)
			}
			r.mu.Lock()
			sc.done = true
			sc.keep(res.Name(), res.Contexts(), res.Images(), res.ConcludesTurn())
			r.mu.Unlock()
			settle(s)
		},
	})
	if !ok {
		settle(sandbox.Settlement{Err: &sandbox.CallError{ToolName: c.Name, Message: "run_code has ended; the call was not dispatched"}})
		return
	}
	r.calls = append(r.calls, sc)
}

// callID names sub-call num: the batch numbers the calls it runs, which are
// the program's own numbers unless the run replays some from the log.
func (r *run) callID(num int) func(int) string {
	if r.resume == nil {
		return r.subID
	}
	return func(int) string { return r.subID(num) }
}

// settlementOf is what the program receives for a sub-call's result: its
// value, or a ToolCallError (the tool's failure, or a value over
// MaxSubCallBytes).
func (r *run) settlementOf(name string, res *runtime.Result) sandbox.Settlement {
	switch value := res.Value().Bytes(); {
	case res.IsError():
		return sandbox.Settlement{Err: &sandbox.CallError{ToolName: name, Code: string(res.Code()), Message: r.errorMessage(name, res)}}
	case len(value) > r.maxValueBytes:
		return sandbox.Settlement{Err: &sandbox.CallError{ToolName: name, Code: "LIMIT", Message: fmt.Sprintf(
			"the tool's value is %s, over the %s a program may receive from one call (limits.max_sub_call_bytes): ask the tool for less (a page, a filter, fewer fields)",
			bytesize.Approx(int64(len(value))), bytesize.Approx(int64(r.maxValueBytes)))}}
	default:
		return sandbox.Settlement{Value: value}
	}
}

var _ sandbox.Holder = (*run)(nil)

// Hold implements sandbox.Holder: the sub-calls wait for Release.
func (r *run) Hold() { r.batch.Hold() }

// Release implements sandbox.Holder: the held sub-calls start, or the one
// the program awaits alone runs on the calling goroutine.
func (r *run) Release(alone bool, stop context.Context) bool { return r.batch.Release(alone, stop) }

// unfinished lists, in submission order, the sub-calls that had not settled
// when the program did: those in flight (which settle cancels) and those
// still queued (which it abandons).
func (r *run) unfinished() []Unfinished {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Unfinished
	for _, sc := range r.calls {
		if sc.done {
			continue
		}
		u := Unfinished{Tool: sc.name, Line: sc.line, State: StateAbandoned}
		if sc.started {
			u.State = StateCancelled
		}
		out = append(out, u)
	}
	return out
}

// settle ends the run's sub-calls: queued ones are abandoned (nothing is
// logged), in-flight ones cancelled, and it returns when they have drained.
func (r *run) settle() {
	r.batch.Close()
	r.abort(nil)
}

// ferry defers the sub-calls' contexts and image content onto the run_code
// result in submission order, and reports whether any asked to conclude
// the turn. It runs after settle.
func (r *run) ferry(exec registry.Exec) (concluded bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, sc := range r.calls {
		if !sc.done {
			continue
		}
		for _, c := range sc.contexts {
			exec.Defer(c)
		}
		if len(sc.images) > 0 {
			exec.Defer(registry.Context{Source: sc.tool, Text: fmt.Sprintf("image content from %s (call %d of the program)", sc.tool, i+1), Content: sc.images})
		}
		concluded = concluded || sc.concludes
	}
	return concluded
}

// keep records what the run's result carries of a settled call.
func (sc *subCall) keep(tool string, contexts []registry.Context, images []registry.ContentBlock, concludes bool) {
	sc.tool, sc.contexts, sc.images, sc.concludes = tool, contexts, images, concludes
}

// viewKeys numbers the views runs have named their tools from.
var viewKeys atomic.Uint64

type namesKey struct{}

// NamesKey implements sandbox.KeyedNames: one key per registry view, so a
// worker pool sends a tool set's names to a worker once, whatever its size.
func (r *run) NamesKey() uint64 {
	return r.view.Memo(namesKey{}, func() any { return viewKeys.Add(1) }).(uint64)
}

var _ sandbox.KeyedNames = (*run)(nil)
