package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/session"
)

// DefaultMaxParallelSubCalls is the overlap window for concurrency-safe
// sub-calls when Options leave it zero.
const DefaultMaxParallelSubCalls = 10

// NoOutput is the content of a run that printed and returned nothing.
const NoOutput = "(run_code completed with no output)"

// Options configure the run_code tool. The zero value works.
type Options struct {
	Limits              sandbox.Options // per run; zero fields take the sandbox defaults
	MaxParallelSubCalls int             // default DefaultMaxParallelSubCalls
	// Runner runs the programs: sandbox.InProcess{} when nil, or a pool of worker
	// processes (package sandbox/worker). Either way the sub-calls, their scheduling and
	// the log stay in this process.
	Runner sandbox.Runner
}

// Bridge is the run_code tool bound to a runtime.
type Bridge struct {
	rt   *runtime.Runtime
	opts Options
	tool *registry.Tool
}

// New returns the bridge for rt. Install it with Install or by passing Tool
// to the registry's SetCodeTransport.
func New(rt *runtime.Runtime, opts Options) *Bridge {
	if opts.MaxParallelSubCalls <= 0 {
		opts.MaxParallelSubCalls = DefaultMaxParallelSubCalls
	}
	if opts.Runner == nil {
		opts.Runner = sandbox.InProcess{}
	}
	b := &Bridge{rt: rt, opts: opts}
	b.tool = registry.MustDefine(b.definition())
	return b
}

// Install creates the bridge and makes it the registry's Code Mode
// transport; Tool then returns the installed run_code.
func Install(rt *runtime.Runtime, opts Options) *Bridge {
	b := New(rt, opts)
	rt.Registry().SetCodeTransport(b.tool)
	b.tool = rt.Registry().CodeTransport()
	return b
}

// Tool is the run_code tool definition.
func (b *Bridge) Tool() *registry.Tool { return b.tool }

// Description is run_code's model-facing description; callers that expose
// run_code (MCP, HTTP) append the scope's SDK to it.
const Description = "Run a JavaScript or TypeScript program (the body of an async function) that calls tools through the `tools` SDK. Only what the program prints with console.log or returns comes back."

func (b *Bridge) definition() registry.Definition {
	f := false
	timeout := b.opts.Limits.Timeout
	if timeout <= 0 {
		timeout = sandbox.DefaultTimeout
	}
	return registry.Definition{
		// The registry names its transport run_code (a reserved name no
		// definition may take) when it is installed with SetCodeTransport.
		Name:        "code_transport",
		Description: Description,
		Parameters: &schema.Node{Type: "object", Required: []string{"code"}, AdditionalProperties: &f, Properties: map[string]*schema.Node{
			"code":        {Type: "string", Description: "The program: the body of an async function. Use `await tools.name(args)`; `return` a JSON value."},
			"description": {Type: "string", Description: "Optional: one line saying what the program does, for the log and the person reading it (derived from the code when absent)."},
		}},
		Output: &schema.Node{Type: "object", Required: []string{"logs"}, AdditionalProperties: &f, Properties: map[string]*schema.Node{
			"logs":   {Type: "array", Items: &schema.Node{Type: "string"}},
			"result": {Type: "json"},
		}},
		Behavior: registry.Behavior{
			Execute:     b.run,
			Render:      render,
			PresentCall: presentCall,
			// The sandbox's own wall-clock limit fires first; this is the backstop.
			Timeout: timeout + 10*time.Second,
		},
	}
}

type timeoutKey struct{}

// WithTimeout returns a context whose run_code executions have wall-clock
// limit d instead of the bridge's (d <= 0 keeps the bridge's).
func WithTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, timeoutKey{}, d)
}

// run is the run_code body.
func (b *Bridge) run(ctx context.Context, exec registry.Exec, args frozen.Value) (any, error) {
	var in struct{ Code, Description string }
	if err := args.Unmarshal(&in); err != nil {
		return nil, &registry.Error{Code: registry.CodeInvalidArgs, Message: err.Error()}
	}
	view := runtime.ViewOf(exec)
	if view == nil {
		return nil, &registry.Error{Code: registry.CodeInternal, Message: "run_code was executed outside the runtime"}
	}
	limits := b.opts.Limits
	if d, ok := ctx.Value(timeoutKey{}).(time.Duration); ok && d > 0 {
		limits.Timeout = d
	}
	r := b.newRun(ctx, exec, view)
	res := b.opts.Runner.Run(ctx, in.Code, r, limits)
	r.settle()
	concluded := r.ferry(exec)
	if res.Err != nil {
		if ctx.Err() != nil && res.Err.Kind == sandbox.KindRuntime {
			// The caller cancelled; a sub-call's rejection may have ended the
			// program first, but the run ended because it was cancelled.
			res.Err = &sandbox.Failure{Kind: sandbox.KindCancelled, Message: "the run was cancelled: " + res.Err.Message}
		}
		return nil, failure(res.Err, res.Logs)
	}
	if concluded {
		exec.ConcludeTurn()
	}
	value := map[string]any{"logs": nonNil(res.Logs)}
	if res.Value != nil {
		value["result"] = json.RawMessage(res.Value)
	}
	return value, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// failure is the CODE_RUN_FAILED error of a failed run; its content states
// the kind and message and keeps the captured logs.
func failure(err error, logs []string) *registry.Error {
	kind, msg := sandbox.KindRuntime, registry.SafeString(err)
	var f *sandbox.Failure
	if errors.As(err, &f) {
		kind, msg = f.Kind, f.Message
	}
	text := fmt.Sprintf("run_code failed (%s): %s", kind, msg)
	if len(logs) > 0 {
		text += "\n\nLogs:\n" + strings.Join(logs, "\n")
	}
	return &registry.Error{Code: registry.CodeCodeRunFailed, Kind: kind, Message: msg, Content: []registry.ContentBlock{registry.Text(text)}}
}

// presentCall is run_code's call card: its description, derived from the
// code when the model gave none.
func presentCall(args frozen.Value) any {
	var in struct{ Code, Description string }
	if args.Unmarshal(&in) != nil {
		return nil
	}
	return map[string]string{"description": DescribeRun(in.Code, in.Description)}
}

// maxDescription bounds a derived description.
const maxDescription = 80

// DescribeRun returns a run's one-line description: description when it is
// not blank, else one derived from the code (its first comment, or its first
// line of code), at most 80 characters.
func DescribeRun(code, description string) string {
	if d := strings.TrimSpace(description); d != "" {
		return d
	}
	for _, line := range strings.Split(code, "\n") {
		line = strings.TrimSpace(line)
		if c, ok := strings.CutPrefix(line, "//"); ok {
			line = strings.TrimSpace(c)
		} else if strings.HasPrefix(line, "/*") || strings.HasPrefix(line, "*") {
			line = strings.TrimSpace(strings.Trim(line, "/* "))
		}
		if line == "" || strings.HasPrefix(line, "```") {
			continue
		}
		if r := []rune(line); len(r) > maxDescription {
			line = string(r[:maxDescription-1]) + "…"
		}
		return line
	}
	return "an empty program"
}

// render shows logs, then the result: strings raw, other JSON pretty-printed.
func render(_, value frozen.Value) []registry.ContentBlock {
	var v struct {
		Logs   []string
		Result json.RawMessage
	}
	if err := value.Unmarshal(&v); err != nil {
		return registry.DefaultRender(value)
	}
	var parts []string
	if len(v.Logs) > 0 {
		parts = append(parts, strings.Join(v.Logs, "\n"))
	}
	if v.Result != nil {
		if r, err := frozen.Parse(v.Result); err == nil {
			parts = append(parts, registry.DefaultRender(r)[0].Text)
		}
	}
	if len(parts) == 0 {
		return []registry.ContentBlock{registry.Text(NoOutput)}
	}
	return []registry.ContentBlock{registry.Text(strings.Join(parts, "\n\n"))}
}

// run is one program's set of sub-calls: the sandbox.Host over a batch.
type run struct {
	batch    *runtime.Batch
	logCtx   context.Context // events are logged even after cancellation
	exec     registry.Exec
	parent   runtime.Token
	approver runtime.Approver
	sink     EventSink
	view     *registry.View

	// settling is held while one sub-call logs its settlement and settles
	// its promise, so the log's order of settlements is the order in which
	// the program sees them.
	settling sync.Mutex

	mu      sync.Mutex
	results map[int]*runtime.Result // by sub-call number; guarded by mu
	last    int                     // highest sub-call number; guarded by mu
}

func (b *Bridge) newRun(ctx context.Context, exec registry.Exec, view *registry.View) *run {
	r := &run{
		batch:  b.rt.NewBatch(ctx, runtime.BatchOptions{Window: b.opts.MaxParallelSubCalls}),
		logCtx: context.WithoutCancel(ctx),
		exec:   exec, approver: runtime.ApproverOf(exec), sink: sinkFrom(ctx), view: view,
		results: map[int]*runtime.Result{},
	}
	r.parent, _ = runtime.TokenOf(exec)
	return r
}

// Has implements sandbox.Host: the tools of the view as the run started;
// run_code is never one.
func (r *run) Has(name string) bool { return r.view.HasSDKTool(name) }

// Names implements sandbox.Host.
func (r *run) Names() []string { return r.view.Names() }

// Call implements sandbox.Host: it submits a sub-call and returns at once.
func (r *run) Call(c sandbox.Call, settle func(sandbox.Settlement)) {
	if r.batch.Context().Err() != nil {
		settle(sandbox.Settlement{Err: &sandbox.CallError{ToolName: c.Name, Message: "run_code was cancelled; the call was not dispatched"}})
		return
	}
	var start session.CodeDispatchStart
	var startedAt time.Time
	subID := func(n int) string { return fmt.Sprintf("%s:code:%d", r.exec.CallID(), n) }
	n, ok := r.batch.Go(runtime.Request{
		Name:      c.Name,
		Arguments: string(c.Args),
		Scope:     r.exec.Scope(),
		SessionID: r.exec.SessionID(),
		Parent:    r.parent,
		Approver:  r.approver,
	}, runtime.Hooks{
		CallID: subID,
		Start: func(n int, _ runtime.Call, _ bool) {
			start = session.CodeDispatchStart{RootCallID: r.exec.CallID(), ParentCallID: r.exec.CallID(), SubCallID: subID(n), Number: n, Name: c.Name, Arguments: json.RawMessage(c.Args)}
			startedAt = time.Now()
			if r.sink != nil {
				r.sink.DispatchStarted(r.logCtx, start)
			}
		},
		Done: func(n int, res *runtime.Result) {
			r.settling.Lock()
			defer r.settling.Unlock()
			if r.sink != nil {
				wire := session.ResultOf(res)
				r.sink.DispatchSettled(r.logCtx, session.CodeDispatch{
					CodeDispatchStart: start, IsError: wire.IsError, Content: wire.Content, Error: wire.Error,
					StartedAt: startedAt, EndedAt: time.Now(),
				})
			}
			r.mu.Lock()
			r.results[n] = res
			r.mu.Unlock()
			if res.IsError() {
				settle(sandbox.Settlement{Err: &sandbox.CallError{ToolName: c.Name, Code: string(res.Code()), Message: res.Error().Message}})
			} else {
				settle(sandbox.Settlement{Value: res.Value().Bytes()})
			}
		},
	})
	if !ok {
		settle(sandbox.Settlement{Err: &sandbox.CallError{ToolName: c.Name, Message: "run_code has ended; the call was not dispatched"}})
		return
	}
	r.mu.Lock()
	r.last = max(r.last, n)
	r.mu.Unlock()
}

// settle ends the run's sub-calls: queued ones are abandoned (nothing is
// logged), in-flight ones cancelled, and it returns when they have drained.
func (r *run) settle() { r.batch.Close() }

// ferry defers the sub-calls' contexts and image content onto the run_code
// result in submission order, and reports whether any asked to conclude
// the turn. It runs after settle.
func (r *run) ferry(exec registry.Exec) (concluded bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for n := 1; n <= r.last; n++ {
		res, ok := r.results[n]
		if !ok {
			continue
		}
		for _, c := range res.Contexts() {
			exec.Defer(c)
		}
		var images []registry.ContentBlock
		for _, blk := range res.Content() {
			if blk.IsImage() {
				images = append(images, blk)
			}
		}
		if len(images) > 0 {
			exec.Defer(registry.Context{Source: res.Name(), Text: fmt.Sprintf("image content from %s (call %d of the program)", res.Name(), n), Content: images})
		}
		concluded = concluded || res.ConcludesTurn()
	}
	return concluded
}
