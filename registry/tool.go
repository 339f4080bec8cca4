package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
)

// RunCode is the reserved name of the Code Mode transport. It can never be
// registered, shadowed, restricted or removed.
const RunCode = "run_code"

// Exec is what a body may use of its execution. The runtime implements it;
// the values are fixed for the life of the call.
type Exec interface {
	// CallID is the caller's id for this call ("<parent>:code:<n>" for SDK sub-calls).
	CallID() string
	// SessionID is the session the call belongs to ("" when none).
	SessionID() string
	// Scope is the scope the call was resolved in ("" for global).
	Scope() string
	// Nested reports whether the call is an SDK sub-call of a run_code program.
	Nested() bool
	// IdempotencyKey is the call's stable key: the same for the same call
	// id in the same session however often the call is made (a transport's
	// retry, or a program's sub-call run again), different for every other
	// call; "" for a call without an id. A tool whose effect must happen
	// once passes it on (MCP upstreams in _meta, HTTP sources as the
	// Idempotency-Key header) or keys its own store by it.
	IdempotencyKey() string
	// DeferContext queues a message for the agent loop to commit as a
	// user/context event after this call's result. Safe for concurrent use.
	DeferContext(text string)
	// Defer queues a context with its own source and content (composite
	// tools use it to ferry their sub-calls' contexts). Safe for concurrent use.
	Defer(c Context)
	// ConcludeTurn asks the agent loop to end the turn after this step.
	ConcludeTurn()
}

// ExecuteFunc is a tool body. It returns the canonical value, which must be
// JSON and match the output schema, or an error (an *Error chooses the code).
type ExecuteFunc func(ctx context.Context, exec Exec, args frozen.Value) (any, error)

// RenderFunc turns a canonical value into model-facing content. It must be
// pure; a panic is an error result.
type RenderFunc func(args, value frozen.Value) []ContentBlock

// Final is what finalizeContent sees of a normalized outcome.
type Final struct {
	Content []ContentBlock // the content so far (a copy)
	IsError bool
	Code    Code // "" on success
	Value   frozen.Value
}

// FinalizeFunc is the tool-owned last invariant over content. It runs
// exactly once per call, on every outcome, and may only return replacement
// content (nil keeps the content).
type FinalizeFunc func(args frozen.Value, f Final) []ContentBlock

// MetaFunc computes UI metadata from a canonical value (top-level calls only).
type MetaFunc func(args, value frozen.Value) (any, error)

// ResultView is what a result presenter sees: logged data only.
type ResultView struct {
	Content []ContentBlock
	IsError bool
	Meta    frozen.Value
}

// PresentCallFunc and PresentResultFunc emit provider-neutral render intent
// from logged data. They must work on replay, from arguments written under
// an older schema; returning nil means "nothing to present".
type (
	PresentCallFunc   func(args frozen.Value) any
	PresentResultFunc func(args frozen.Value, r ResultView) any
)

// Behavior is everything about a tool that is not its schemas.
type Behavior struct {
	Execute          ExecuteFunc       // required
	Render           RenderFunc        // nil: text of the value (strings raw, other JSON pretty-printed)
	FinalizeContent  FinalizeFunc      // optional
	PresentationMeta MetaFunc          // optional
	PresentCall      PresentCallFunc   // optional
	PresentResult    PresentResultFunc // optional
	// IsConcurrencySafe classifies a call: only an exact true lets it overlap
	// with others. Nil, false or a panic mean exclusive.
	IsConcurrencySafe func(args frozen.Value) bool
	// Timeout bounds one call of the tool, its body past it failing as
	// TOOL_TIMEOUT. The registry does not enforce it: the runtime's timeout
	// wrapper (runtime.Timeout) does, where one is mounted, and 0 means that
	// wrapper's default (limits.timeout in a service that package app
	// assembles; none in a runtime without the wrapper). A caller's own
	// deadline (a program's run) still ends the call first. It is never
	// shown to a model.
	Timeout time.Duration
	// Hints describe the tool's effects (MCP's tool annotations).
	Hints Hints
}

// Hints describe what a tool does to the world, with the meanings and
// defaults of MCP's tool annotations. They are advisory for clients, with one
// exception: the session log skips the write-ahead wait for a sub-call of a
// ReadOnly tool (its dispatch-start need not be durable before its body
// runs), so ReadOnly must only be set on tools without effects.
type Hints struct {
	// Title is a human-readable name for user interfaces ("" when none).
	Title string
	// ReadOnly: the tool does not modify its environment. Default false.
	ReadOnly bool
	// Destructive: the tool may destroy or overwrite data (meaningful only
	// when not ReadOnly). Nil means unknown, which clients read as true.
	Destructive *bool
	// Idempotent: calling it again with the same arguments has no further
	// effect. Nil means unknown (false).
	Idempotent *bool
	// OpenWorld: the tool reaches entities outside a closed domain (the web,
	// another service). Nil means unknown (true).
	OpenWorld *bool
}

// Definition declares a tool with the schema DSL. See Define.
type Definition struct {
	Name        string
	Description string
	Parameters  *schema.Node // the parameter root: an implicitly open object
	Output      *schema.Node // the value's schema; required
	Behavior
}

// RawDefinition declares a tool with standard JSON Schemas. See Raw.
type RawDefinition struct {
	Name        string
	Description string
	// Parameters is shown to models verbatim and is NOT enforced, unless
	// EnforceParameters is set.
	Parameters json.RawMessage
	// EnforceParameters validates arguments against Parameters before the
	// body runs, as Define does: violations are an INVALID_ARGS failure
	// listing each with its JSON path, and the call never starts.
	EnforceParameters bool
	// Output is a standard JSON Schema; required; every value is validated.
	Output json.RawMessage
	Behavior
}

// Tool is a compiled, immutable tool definition.
type Tool struct {
	name, description string
	params            *schema.Schema
	validatesArgs     bool
	output            *schema.Schema
	b                 Behavior
	// decodes, for typed tools, checks that schema-valid arguments also
	// decode into the body's Go type; nil for others.
	decodes func(frozen.Value) error
}

var namePattern = regexp.MustCompile(`^[^\x00-\x1f\x7f]{1,128}$`)

func checkCommon(name string, b *Behavior) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("tool name %q: must be 1-128 characters with no control characters", name)
	}
	if strings.HasPrefix(name, "$") {
		return fmt.Errorf("tool name %q: names starting with \"$\" are reserved for the SDK's own members (tools.$search, tools.$describe)", name)
	}
	if b.Execute == nil {
		return fmt.Errorf("tool %q: Execute is required", name)
	}
	if b.Timeout < 0 {
		return fmt.Errorf("tool %q: negative timeout", name)
	}
	return nil
}

// Define compiles a tool from the schema DSL. Its arguments are validated
// against Parameters before the body runs: violations become an
// INVALID_ARGS failure listing every violation with its JSON path, and the
// body never sees invalid arguments. Schemas are compiled once, here.
func Define(d Definition) (*Tool, error) {
	if d.Name == RunCode {
		return nil, errReserved
	}
	return define(d)
}

// errReserved refuses RunCode to Define and Raw.
var errReserved = fmt.Errorf("tool name %q is reserved for the Code Mode transport (DefineCodeTransport)", RunCode)

// DefineCodeTransport compiles the Code Mode transport, the one tool named
// RunCode, as Define does; d.Name must be RunCode. Install it with the
// registry's SetCodeTransport.
func DefineCodeTransport(d Definition) (*Tool, error) {
	if d.Name != RunCode {
		return nil, fmt.Errorf("the Code Mode transport is named %q, not %q", RunCode, d.Name)
	}
	return define(d)
}

func define(d Definition) (*Tool, error) {
	if err := checkCommon(d.Name, &d.Behavior); err != nil {
		return nil, err
	}
	if d.Output == nil {
		return nil, fmt.Errorf("tool %q: an output schema is required", d.Name)
	}
	params := d.Parameters
	if params == nil {
		params = &schema.Node{Type: "object"}
	}
	ps, err := schema.Compile(params, schema.Parameters)
	if err != nil {
		return nil, fmt.Errorf("tool %q: parameters: %w", d.Name, err)
	}
	os, err := schema.Compile(d.Output, schema.Value)
	if err != nil {
		return nil, fmt.Errorf("tool %q: output: %w", d.Name, err)
	}
	return &Tool{name: d.Name, description: d.Description, params: ps, validatesArgs: true, output: os, b: d.Behavior}, nil
}

// MustDefine is Define for package-level tool tables; it panics on error.
func MustDefine(d Definition) *Tool {
	t, err := Define(d)
	if err != nil {
		panic(err)
	}
	return t
}

// Raw compiles a tool from standard JSON Schemas without argument
// validation: its body receives whatever JSON the caller sent, which may not
// match Parameters. That is a trust boundary: a raw body must check its own
// arguments. The output schema is still required and still enforced.
func Raw(d RawDefinition) (*Tool, error) {
	if d.Name == RunCode {
		return nil, errReserved
	}
	if err := checkCommon(d.Name, &d.Behavior); err != nil {
		return nil, err
	}
	if len(d.Output) == 0 {
		return nil, fmt.Errorf("tool %q: an output schema is required", d.Name)
	}
	params := d.Parameters
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object"}`)
	}
	ps, err := schema.CompileStandard(params)
	if err != nil {
		return nil, fmt.Errorf("tool %q: parameters: %w", d.Name, err)
	}
	os, err := schema.CompileStandard(d.Output)
	if err != nil {
		return nil, fmt.Errorf("tool %q: output: %w", d.Name, err)
	}
	return &Tool{name: d.Name, description: d.Description, params: ps, validatesArgs: d.EnforceParameters, output: os, b: d.Behavior}, nil
}

// Name is the tool's name.
func (t *Tool) Name() string { return t.name }

// Description is the model-facing description.
func (t *Tool) Description() string { return t.description }

// Parameters returns the model-facing parameter schema (a fresh copy).
func (t *Tool) Parameters() json.RawMessage { return t.params.JSON() }

// OutputSchema returns the value's schema (a fresh copy).
func (t *Tool) OutputSchema() json.RawMessage { return t.output.JSON() }

// ValidatesArgs reports whether the tool's arguments are checked before its
// body runs (Define, or Raw with EnforceParameters).
func (t *Tool) ValidatesArgs() bool { return t.validatesArgs }

// Timeout is the tool's timeout (0: none).
func (t *Tool) Timeout() time.Duration { return t.b.Timeout }

// Hints returns the tool's effect hints.
func (t *Tool) Hints() Hints { return t.b.Hints }

// HasPresentationMeta reports whether the tool declares presentationMeta.
func (t *Tool) HasPresentationMeta() bool { return t.b.PresentationMeta != nil }

// HasFinalizer reports whether the tool declares finalizeContent.
func (t *Tool) HasFinalizer() bool { return t.b.FinalizeContent != nil }

// CheckArgs validates arguments for tools from Define and Typed and raw tools with
// EnforceParameters (a typed tool's arguments must also decode into its input
// type); it returns nil for other raw tools. A non-nil error is an *Error with code INVALID_ARGS.
func (t *Tool) CheckArgs(args frozen.Value) error {
	if !t.validatesArgs {
		return nil
	}
	if t.params.ValidText(args.String()) {
		return t.checkDecodes(args)
	}
	tree, err := args.Decode()
	if err != nil {
		return &Error{Code: CodeInvalidArgs, Message: fmt.Sprintf("invalid arguments for %s: %v", t.name, err)}
	}
	if vs := t.params.Validate(tree); len(vs) > 0 {
		return &Error{Code: CodeInvalidArgs, Message: fmt.Sprintf("invalid arguments for %s: %s", t.name, schema.Format(vs))}
	}
	return t.checkDecodes(args)
}

func (t *Tool) checkDecodes(args frozen.Value) error {
	if t.decodes == nil {
		return nil
	}
	return t.decodes(args)
}

// Invoke runs CheckArgs, then the body.
func (t *Tool) Invoke(ctx context.Context, exec Exec, args frozen.Value) (any, error) {
	if err := t.CheckArgs(args); err != nil {
		return nil, err
	}
	return t.Body(ctx, exec, args)
}

// Body runs the body without checking arguments (the runtime checks them
// first, so that a call with invalid arguments never counts as started). A
// panic in the body is returned as *PanicError.
func (t *Tool) Body(ctx context.Context, exec Exec, args frozen.Value) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, &PanicError{Where: "tool " + t.name, Value: r}
		}
	}()
	return t.b.Execute(ctx, exec, args)
}

// ValidateOutput checks a frozen value against the output schema; a non-nil
// error is an *Error with code INVALID_TOOL_OUTPUT.
func (t *Tool) ValidateOutput(v frozen.Value) error {
	return t.ValidateOutputOf(nil, v)
}

// ValidateOutputOf is ValidateOutput for a value frozen from body, the Go
// value a body returned: when body is already a plain decoded-JSON tree
// (maps, slices, strings, float64, json.Number, bools, nil) it is validated
// as is, which means the same as validating its snapshot and saves decoding
// the snapshot again.
func (t *Tool) ValidateOutputOf(body any, v frozen.Value) error {
	tree := body
	if body == nil || !plainJSON(body, 0) {
		if t.output.ValidText(v.String()) {
			return nil
		}
		var err error
		if tree, err = v.Decode(); err != nil {
			return &Error{Code: CodeInvalidToolOutput, Message: fmt.Sprintf("%s returned a value that is not JSON: %v", t.name, err)}
		}
	}
	if vs := t.output.Validate(tree); len(vs) > 0 {
		return &Error{Code: CodeInvalidToolOutput, Message: fmt.Sprintf("%s returned a value that does not match its output schema: %s", t.name, schema.Format(vs))}
	}
	return nil
}

// plainJSON reports whether v is a small tree of decoded-JSON types whose
// snapshot decodes back to an equal tree. Deep trees take the decode path.
func plainJSON(v any, depth int) bool {
	if depth > 64 {
		return false
	}
	switch x := v.(type) {
	case string:
		return utf8.ValidString(x) // invalid UTF-8 changes when marshalled
	case bool, json.Number:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case []any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || (e != nil && !plainJSON(e, depth+1)) {
				return false
			}
		}
		return true
	}
	return false
}

// Render produces the content for a canonical value.
func (t *Tool) Render(args, value frozen.Value) (blocks []ContentBlock, err error) {
	if t.b.Render == nil {
		return DefaultRender(value), nil
	}
	defer func() {
		if r := recover(); r != nil {
			blocks, err = nil, &PanicError{Where: "render of " + t.name, Value: r}
		}
	}()
	return CloneContent(t.b.Render(args, value)), nil
}

// DefaultRender renders a value as text: a string raw, any other JSON
// pretty-printed.
func DefaultRender(value frozen.Value) []ContentBlock {
	if value.Kind() == "string" {
		var s string
		if value.Unmarshal(&s) == nil {
			return []ContentBlock{Text(s)}
		}
	}
	return []ContentBlock{Text(value.Indent())}
}

// Meta computes presentationMeta; absent when the tool declares none.
func (t *Tool) Meta(args, value frozen.Value) (m frozen.Value, err error) {
	if t.b.PresentationMeta == nil {
		return frozen.Value{}, nil
	}
	defer func() {
		if r := recover(); r != nil {
			m, err = frozen.Value{}, &PanicError{Where: "presentationMeta of " + t.name, Value: r}
		}
	}()
	raw, err := t.b.PresentationMeta(args, value)
	if err != nil {
		return frozen.Value{}, err
	}
	if raw == nil {
		return frozen.Value{}, nil
	}
	return frozen.Snapshot(raw)
}

// Finalizer returns the finalizeContent hook (nil when none). The runtime
// captures it when a call starts.
func (t *Tool) Finalizer() FinalizeFunc { return t.b.FinalizeContent }

// ConcurrencySafe reports whether a call with these arguments may overlap
// other calls: only when the classifier returns exactly true for arguments
// that pass validation. No classifier, invalid arguments or a panic mean
// exclusive.
func (t *Tool) ConcurrencySafe(args frozen.Value) (safe bool) {
	return t.CheckArgs(args) == nil && t.ClassifyChecked(args)
}

// ClassifyChecked is ConcurrencySafe for arguments that already passed
// CheckArgs (the runtime validates each call's arguments once and reuses the
// verdict).
func (t *Tool) ClassifyChecked(args frozen.Value) (safe bool) {
	if t.b.IsConcurrencySafe == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			safe = false
		}
	}()
	return t.b.IsConcurrencySafe(args)
}

// PresentCall runs the call presenter softly: nil when the tool has none,
// when the arguments do not match the current schema (replayed data from an
// older schema), or when the presenter panics.
func (t *Tool) PresentCall(args frozen.Value) (out any) {
	if t.b.PresentCall == nil || t.softMismatch(args) {
		return nil
	}
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	return t.b.PresentCall(args)
}

// PresentResult is PresentCall for results.
func (t *Tool) PresentResult(args frozen.Value, r ResultView) (out any) {
	if t.b.PresentResult == nil || t.softMismatch(args) {
		return nil
	}
	r.Content = CloneContent(r.Content)
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	return t.b.PresentResult(args, r)
}

func (t *Tool) softMismatch(args frozen.Value) bool {
	if args.IsZero() {
		return true
	}
	if t.params.ValidText(args.String()) {
		return false
	}
	tree, err := args.Decode()
	return err != nil || len(t.params.Validate(tree)) > 0
}

// PanicError is a recovered panic, reported as an ordinary error.
type PanicError struct {
	Where string
	Value any
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("%s panicked: %s", e.Where, SafeString(e.Value))
}
