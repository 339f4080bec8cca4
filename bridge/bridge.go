package bridge

import (
	"context"
	"encoding/json"

	"github.com/codemode/codemode/internal/positive"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
)

// Defaults for Options fields left zero.
const (
	// DefaultMaxContentBytes bounds what a model sees of one run (and what a
	// settlement event keeps of a sub-call's content).
	DefaultMaxContentBytes = 32 << 10
	// DefaultMaxSubCallBytes bounds the value one sub-call hands the program.
	DefaultMaxSubCallBytes = 4 << 20
)

// Options configure the run_code tool. The zero value works.
type Options struct {
	Limits              sandbox.Options // per run; zero fields take the sandbox defaults
	MaxParallelSubCalls int             // overlapping concurrency-safe sub-calls; default runtime.DefaultWindow
	// MaxContentBytes bounds the content of a run_code result, which is what
	// the model sees: logs and result beyond it are cut with a marker saying
	// how much was cut and how to return less. The value is not cut. It also
	// bounds the content each nested settlement event keeps.
	MaxContentBytes int
	// MaxSubCallBytes bounds a sub-call's value as JSON: a larger one rejects
	// that call in the program (the value is never cut).
	MaxSubCallBytes int
	// Runner runs the programs: sandbox.InProcess{} when nil, or a pool of worker
	// processes (package sandbox/worker). Either way the sub-calls, their scheduling and
	// the log stay in this process.
	Runner sandbox.Runner
	// PromptBudget bounds run_code's description (Prompt) in o200k tokens: the whole SDK while
	// it fits, a catalog past it (sdkgen.PromptOptions.Budget). 0: sdkgen.DefaultPromptBudget;
	// negative: no bound.
	PromptBudget int
	// Pinned lists, per scope, the tools its catalog shows whole first.
	Pinned map[string][]string
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
	opts.MaxParallelSubCalls = positive.Or(opts.MaxParallelSubCalls, runtime.DefaultWindow)
	opts.MaxContentBytes = positive.Or(opts.MaxContentBytes, DefaultMaxContentBytes)
	opts.MaxSubCallBytes = positive.Or(opts.MaxSubCallBytes, DefaultMaxSubCallBytes)
	if opts.Runner == nil {
		opts.Runner = sandbox.InProcess{}
	}
	b := &Bridge{rt: rt, opts: opts}
	tool, err := registry.DefineCodeTransport(b.definition())
	if err != nil {
		panic(err) // the definition is this package's own
	}
	b.tool = tool
	rt.SetNestingBody(b.run)
	return b
}

// Install creates the bridge and makes it the registry's Code Mode
// transport; Tool then returns the installed run_code.
func Install(rt *runtime.Runtime, opts Options) *Bridge {
	b := New(rt, opts)
	rt.Registry().SetCodeTransport(b.tool)
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
		Name:        registry.RunCode,
		Description: Description,
		Parameters: &schema.Node{Type: "object", Required: []string{"code"}, AdditionalProperties: &f, Properties: map[string]*schema.Node{
			"code":        {Type: "string", Description: "The program: the body of an async function. Use `await tools.name(args)`; `return` a JSON value."},
			"description": {Type: "string", Description: "Optional: one line saying what the program does, for the log and the person reading it (derived from the code when absent)."},
		}},
		Output: &schema.Node{Type: "object", Required: []string{"logs"}, AdditionalProperties: &f, Properties: map[string]*schema.Node{
			"logs":   {Type: "array", Items: &schema.Node{Type: "string"}},
			"result": {Type: "json"},
			"unfinished_calls": {Type: "array", Items: &schema.Node{Type: "object", AdditionalProperties: &f, Required: []string{"tool", "state"}, Properties: map[string]*schema.Node{
				"tool":  {Type: "string"},
				"line":  {Type: "integer"},
				"state": {Type: "string", Enum: []any{StateCancelled, StateAbandoned}},
			}}},
		}},
		Behavior: registry.Behavior{
			// The runtime runs b.run instead (SetNestingBody), with the
			// call's Nesting; this body is reached only outside a runtime.
			Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
				return nil, &registry.Error{Code: registry.CodeInternal, Message: "run_code was executed outside the runtime"}
			},
			Render:      b.render,
			PresentCall: presentCall,
			// The sandbox's own wall-clock limit fires first; this is the backstop.
			Timeout: timeout + runtime.RunBackstop,
		},
	}
}

// run is the run_code body: the runtime gives it the call's Nesting.
func (b *Bridge) run(ctx context.Context, n *runtime.Nesting, args frozen.Value) (any, error) {
	var in struct{ Code, Description string }
	if err := args.Unmarshal(&in); err != nil {
		return nil, &registry.Error{Code: registry.CodeInvalidArgs, Message: err.Error()}
	}
	if n.View == nil {
		return nil, &registry.Error{Code: registry.CodeInternal, Message: "run_code has no view to run in"}
	}
	exec := n.Exec
	limits := b.opts.Limits
	if n.Run.Timeout > 0 {
		limits.Timeout = n.Run.Timeout
	}
	r := b.newRun(ctx, n)
	var host sandbox.Host = r
	if r.resumable() {
		host = resumableRun{r}
	}
	res := b.opts.Runner.Run(r.programCtx, in.Code, host, limits)
	if r.stopping() {
		if cause := context.Cause(r.programCtx); cause == errSuspending && ctx.Err() == nil {
			return nil, r.suspension(res)
		}
	}
	if d := r.diverged(res); d != "" {
		r.settle()
		return nil, &registry.Error{Code: registry.CodeReplayDiverged, Message: "run_code could not resume: " + d}
	}
	left := r.unfinished() // as the program settled, before settle stops them
	r.settle()
	concluded := r.ferry(exec)
	res.Logs = append(res.Logs, r.notices.logs()...) // what its tools reported, after its own
	if res.Err != nil {
		if ctx.Err() != nil && res.Err.Kind == sandbox.KindRuntime {
			// The caller cancelled; a sub-call's rejection may have ended the
			// program first, but the run ended because it was cancelled.
			res.Err = &sandbox.Failure{Kind: sandbox.KindCancelled, Message: "the run was cancelled: " + res.Err.Message}
		}
		return nil, b.failure(res.Err, res.Logs, left)
	}
	if concluded {
		exec.ConcludeTurn()
	}
	out := runValue{Logs: nonNil(res.Logs), Unfinished: left}
	if res.Value != nil {
		out.Result = json.RawMessage(res.Value)
	}
	return out, nil
}

// runValue is run_code's canonical value.
type runValue struct {
	Logs       []string        `json:"logs"`
	Result     json.RawMessage `json:"result,omitempty"`
	Unfinished []Unfinished    `json:"unfinished_calls,omitempty"`
}
