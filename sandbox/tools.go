package sandbox

import (
	"fmt"
	"reflect"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// preludeSource defines ToolCallError. It runs on first use (the global ToolCallError is read,
// or a call rejects) and extends the Error it finds then: a program that replaced Error or
// Object.defineProperty before that gets what it asked for, in its own runtime only.
const preludeSource = `(function () {
	const defineProperty = Object.defineProperty;
	class ToolCallError extends Error {
		constructor(toolName, message, code) {
			super(message);
			defineProperty(this, "toolName", {value: String(toolName), writable: true, enumerable: true, configurable: true});
			defineProperty(this, "code", {value: code === undefined ? "TOOL_FAILED" : String(code), writable: true, enumerable: true, configurable: true});
		}
	}
	defineProperty(ToolCallError.prototype, "name", {value: "ToolCallError", writable: true, enumerable: false, configurable: true});
	return ToolCallError;
})()`

var prelude = func() *goja.Program {
	ast, err := parser.ParseFile(nil, "prelude.js", preludeSource, 0, parser.WithDisableSourceMaps)
	if err != nil {
		panic(err)
	}
	p, err := goja.CompileAST(ast, true)
	if err != nil {
		panic(err)
	}
	return p
}()

// toolsObject is the program's global tools: a dynamic object answering from the Host, so its
// set-up cost does not depend on how many tools there are. A name the Host has is a binding
// (__proto__ and constructor included); any other name reads as a function whose call rejects
// with an UNKNOWN_TOOL ToolCallError naming the nearest tools, so the most common mistake gets
// the most helpful message — except the names JavaScript itself probes objects for (then,
// toJSON, toString…), which read as undefined so that tools is not mistaken for a promise.
// `"name" in tools` and Object.keys(tools) list only real tools. Its prototype holds only
// Symbol.toPrimitive and Symbol.toStringTag: String(tools) is "[object Tools]".
type toolsObject struct{ r *run }

var _ goja.DynamicObject = toolsObject{}

func (r *run) newTools() *goja.Object {
	r.bindings = make(map[string]goja.Value)
	o := r.rt.NewDynamicObject(toolsObject{r})
	proto := r.rt.CreateObject(nil)
	tag := r.rt.ToValue("Tools")
	must(proto.DefineDataPropertySymbol(goja.SymToStringTag, tag, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE))
	toPrimitive := r.function("[Symbol.toPrimitive]", func(goja.FunctionCall) goja.Value { return r.rt.ToValue("[object Tools]") })
	must(proto.DefineDataPropertySymbol(goja.SymToPrimitive, toPrimitive, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE))
	must(o.SetPrototype(proto))
	return o
}

// probedNames are the property names JavaScript and common libraries look up on any object
// (thenables, JSON, string conversion, inspection); on tools they are undefined unless a tool
// has the name.
var probedNames = map[string]bool{
	"then": true, "catch": true, "finally": true, "toJSON": true, "toString": true, "valueOf": true,
	"toLocaleString": true, "constructor": true, "__proto__": true, "hasOwnProperty": true,
	"isPrototypeOf": true, "propertyIsEnumerable": true, "inspect": true, "nodeType": true,
	"asymmetricMatch": true, "$$typeof": true, "length": true, "prototype": true, "call": true,
	"apply": true, "bind": true, "name": true, "__esModule": true, "default": true,
}

// Discovery members of tools: not tools, but the host's own catalog of them. Their calls reach
// the Host like tool calls, named as here, with all their arguments as one JSON array
// (`tools.$search("x", {limit: 5})` sends `["x",{"limit":5}]`). No tool can take a name that
// starts with "$", so they never shadow one; Object.keys(tools) does not list them.
const (
	SearchName   = "$search"
	DescribeName = "$describe"
)

// IsDiscovery reports whether name is a discovery member of tools.
func IsDiscovery(name string) bool { return name == SearchName || name == DescribeName }

func (t toolsObject) Get(name string) goja.Value {
	defer recoverNative(t.r.rt, "tools")
	if v, ok := t.r.bindings[name]; ok {
		return v
	}
	var v goja.Value
	switch {
	case IsDiscovery(name):
		v = t.r.function(name, func(call goja.FunctionCall) goja.Value {
			return t.r.callTool(name, call)
		})
	case t.r.host.Has(name):
		v = t.r.newBinding(name)
	case probedNames[name]:
		return nil
	default:
		v = t.r.function(name, func(goja.FunctionCall) goja.Value {
			return t.r.rejectedAt(name, "UNKNOWN_TOOL", t.r.unknownToolMessage(name))
		})
	}
	t.r.bindings[name] = v
	return v
}

func (t toolsObject) Has(name string) bool {
	defer recoverNative(t.r.rt, "tools")
	return IsDiscovery(name) || t.r.host.Has(name)
}

func (t toolsObject) Keys() []string {
	defer recoverNative(t.r.rt, "tools")
	return append([]string(nil), t.r.host.Names()...)
}

// Set and Delete refuse: tools is read-only (a strict-mode program gets a TypeError).
func (toolsObject) Set(string, goja.Value) bool { return false }
func (toolsObject) Delete(string) bool          { return false }

// newBinding makes the function behind tools[name].
func (r *run) newBinding(name string) goja.Value {
	return r.function(name, func(call goja.FunctionCall) goja.Value {
		return r.callTool(name, call)
	})
}

// toolCallErrorAccessor backs the global ToolCallError until first use: read, it makes the
// class and turns the global into a plain data property holding it; assigned, it becomes a
// data property holding the new value.
func (r *run) toolCallErrorAccessor(call goja.FunctionCall) goja.Value {
	v := call.Argument(0)
	if len(call.Arguments) == 0 {
		v = r.toolCallErrorClass()
	}
	must(r.rt.GlobalObject().DefineDataProperty("ToolCallError", v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	return v
}

// toolCallErrorClass returns the run's ToolCallError class, making it on first use.
func (r *run) toolCallErrorClass() *goja.Object {
	if r.toolCallError == nil {
		v, err := r.rt.RunProgram(prelude)
		if err != nil {
			panic(err) // an exception or interrupt: let goja unwind with it
		}
		r.toolCallError = v.(*goja.Object)
	}
	return r.toolCallError
}

// callTool is tools[name](args): snapshot the argument, dispatch it to the Host and return the
// promise its settlement will resolve. A bad argument rejects the promise and dispatches nothing.
func (r *run) callTool(name string, call goja.FunctionCall) goja.Value {
	var args []byte
	switch n := len(call.Arguments); {
	case IsDiscovery(name):
		if n > 2 {
			return r.rejectedAt(name, "INVALID_ARGS", fmt.Sprintf("tools.%s takes at most two arguments, got %d", name, n))
		}
		b, serr := r.snapshot(r.rt.NewArray(toInterfaces(call.Arguments)...), snapArgument, r.opts.MaxArgBytes)
		if serr != nil {
			return r.rejectedAt(name, "INVALID_ARGS", serr.message())
		}
		args = b
	case n == 0:
		args = []byte("{}")
	case n == 1:
		b, serr := r.snapshot(call.Arguments[0], snapArgument, r.opts.MaxArgBytes)
		if serr != nil {
			return r.rejectedAt(name, "INVALID_ARGS", serr.message())
		}
		if args = b; b == nil {
			args = []byte("{}") // undefined, as JSON.stringify sees it: no argument
		}
	default:
		return r.rejectedAt(name, "INVALID_ARGS", fmt.Sprintf("tools.%s takes one argument, got %d", name, len(call.Arguments)))
	}
	site := r.callSite()
	if r.calls >= r.opts.MaxCalls {
		r.fail(&Failure{Kind: KindLimit, Message: fmt.Sprintf("the program made more than %d tool calls", r.opts.MaxCalls)})
		return goja.Undefined() // the program stops at its next instruction
	}
	if r.callBytes+len(args) > r.opts.MaxCallBytes {
		r.fail(&Failure{Kind: KindLimit, Message: fmt.Sprintf(
			"the program's tool calls passed more than %d bytes of arguments in all; pass less per call, or split the work over runs", r.opts.MaxCallBytes)})
		return goja.Undefined()
	}
	r.callBytes += len(args)
	r.calls++
	c := &pendingCall{r: r, name: name, at: site, seq: r.calls}
	p, resolve, reject := r.rt.NewPromise()
	c.resolve, c.reject = resolve, reject
	r.inflight++
	r.dispatch(Call{Seq: r.calls, Name: name, Args: args, Line: site.line, Column: site.column, Journal: r.jr.take()}, c.settle)
	if r.holder != nil {
		if r.held++; r.held == 1 {
			r.heldSince.Store(time.Now().UnixNano())
		}
	}
	return r.rt.ToValue(p)
}

func toInterfaces(vs []goja.Value) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// pendingCall is a dispatched call until its settlement is applied in the VM.
type pendingCall struct {
	r               *run
	name            string
	seq             int // Call.Seq
	at              site
	resolve, reject func(any) error
	settled         atomic.Bool
	s               Settlement // written once, before the call is queued
}

// settle is the Host's settle function: the first settlement is queued for the VM goroutine,
// later ones are ignored. Safe from any goroutine.
func (c *pendingCall) settle(s Settlement) {
	if c.settled.CompareAndSwap(false, true) {
		c.s = s
		c.r.enqueue(c)
	}
}

// run applies the settlement on the VM goroutine.
func (c *pendingCall) run() {
	c.r.inflight--
	c.r.applySettlement(c.name, c.at, c.s, c.resolve, c.reject)
}

// site is where in the program a call was made: its own line and column, and the position a
// stack trace shows for it.
type site struct {
	line, column int
	file         string // programName or tsName; "" when unknown
	fileLine     int
	fileColumn   int
}

// frame is the text a stack trace shows for the site, as "program.js:4:7"; "" when unknown.
func (s site) frame() string {
	if s.file == "" {
		return ""
	}
	return s.file + ":" + strconv.Itoa(s.fileLine) + ":" + strconv.Itoa(s.fileColumn)
}

// callSite finds the innermost frame of the program calling a native function.
func (r *run) callSite() site {
	r.scratch.frames = r.rt.CaptureCallStack(8, r.scratch.frames[:0])
	for _, f := range r.scratch.frames {
		pos := f.Position()
		if pos.Filename != programName && pos.Filename != tsName {
			continue
		}
		line, col, ok := r.prog.frame(pos.Line, pos.Column)
		if !ok {
			continue
		}
		return site{line: line, column: col, file: pos.Filename, fileLine: pos.Line, fileColumn: pos.Column}
	}
	return site{}
}

// dispatch hands c to the Host. A Host panic settles the call as failed.
func (r *run) dispatch(c Call, settle func(Settlement)) {
	r.callMu.Lock()
	defer r.callMu.Unlock()
	if r.callsClosed {
		settle(Settlement{Err: &CallError{ToolName: c.Name, Message: "the run has ended"}})
		return
	}
	defer func() {
		if x := recover(); x != nil {
			settle(Settlement{Err: &CallError{ToolName: c.Name, Message: fmt.Sprintf("internal error: dispatching the call panicked: %v", x)}})
		}
	}()
	r.host.Call(c, settle)
}

// applySettlement resolves or rejects a call's promise on the VM goroutine.
func (r *run) applySettlement(name string, at site, s Settlement, resolve, reject func(any) error) {
	if s.Err != nil {
		tool := s.Err.ToolName
		if tool == "" {
			tool = name
		}
		must(reject(r.newToolCallError(tool, s.Err.Code, s.Err.Message, at)))
		return
	}
	if len(s.Value) == 0 {
		must(resolve(goja.Undefined()))
		return
	}
	v, err := r.fromJSON(s.Value)
	switch {
	case err == nil:
	case jsonDepth(s.Value) > MaxDataDepth:
		// json.Valid refuses nesting past MaxDataDepth (encoding/json's own limit), so only
		// refused text can be too deep.
		must(reject(r.newToolCallError(name, "INVALID_TOOL_OUTPUT", fmt.Sprintf("the tool's value nests deeper than %d levels", MaxDataDepth), at)))
		return
	default:
		must(reject(r.newToolCallError(name, "INVALID_TOOL_OUTPUT", "the tool's value is not valid JSON", at)))
		return
	}
	must(resolve(v))
}

// rejectedAt returns a promise already rejected with a ToolCallError for a call made here.
func (r *run) rejectedAt(tool, code, message string) goja.Value {
	p, _, reject := r.rt.NewPromise()
	must(reject(r.newToolCallError(tool, code, message, r.callSite())))
	return r.rt.ToValue(p)
}

// newToolCallError builds a ToolCallError with the constructor captured before the program
// ran, its stack pointing at the call's own line. Should construction throw anyway, a plain
// object with the same fields stands in.
func (r *run) newToolCallError(tool, code, message string, at site) *goja.Object {
	if code == "" {
		code = "TOOL_FAILED"
	}
	var o *goja.Object
	ex := r.rt.Try(func() {
		var err error
		if o, err = r.rt.New(r.toolCallErrorClass(), r.rt.ToValue(tool), r.rt.ToValue(message), r.rt.ToValue(code)); err != nil {
			panic(err)
		}
	})
	if ex != nil {
		o = r.rt.NewObject()
		_ = o.DefineDataProperty("name", r.rt.ToValue("ToolCallError"), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		_ = o.DefineDataProperty("toolName", r.rt.ToValue(tool), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		_ = o.DefineDataProperty("code", r.rt.ToValue(code), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		_ = o.DefineDataProperty("message", r.rt.ToValue(message), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	if frame := at.frame(); frame != "" {
		stack := "ToolCallError: " + message + "\n    at tools." + tool + " (" + frame + ")"
		_ = o.DefineDataProperty("stack", r.rt.ToValue(stack), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	return o
}

// native wraps a Go function exposed to JavaScript so that a Go panic in it becomes a
// JavaScript Error instead of crashing the process. goja's own panics (exceptions,
// interrupts, stack overflows) pass through untouched: that is how goja unwinds.
func (r *run) native(where string, fn func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		defer recoverNative(r.rt, where)
		return fn(call)
	}
}

// recoverNative must be deferred directly. See native.
func recoverNative(rt *goja.Runtime, where string) {
	x := recover()
	if x == nil {
		return
	}
	if isGojaPanic(x) {
		panic(x)
	}
	panic(rt.NewTypeError(fmt.Sprintf("internal error in %s: %v", where, x)))
}

const gojaPkg = "github.com/dop251/goja"

// isGojaPanic reports whether a recovered value is one goja panics with on purpose: a thrown
// JavaScript value, an exception, an interrupt or stack overflow, or goja's internal error
// types. Everything else is a Go bug or a host panic.
func isGojaPanic(x any) bool {
	switch x.(type) {
	case goja.Value, *goja.Exception, *goja.InterruptedError, *goja.StackOverflowError:
		return true
	}
	t := reflect.TypeOf(x)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() == gojaPkg
}

func isUncatchable(err error) bool {
	switch err.(type) {
	case *goja.InterruptedError, *goja.StackOverflowError:
		return true
	}
	return false
}

// must propagates an uncatchable error (interrupt, stack overflow) returned by a goja call
// made from Go inside the VM; goja expects such errors to keep unwinding.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// jsonDepth returns the deepest array/object nesting in JSON text (valid or not), stopping
// early once it passes MaxDataDepth.
func jsonDepth[T string | []byte](b T) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > MaxDataDepth {
					return deepest
				}
			}
		case ']', '}':
			depth--
		}
	}
	return deepest
}
