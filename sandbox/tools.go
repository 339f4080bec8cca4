package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"sync/atomic"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// preludeSource defines ToolCallError. It runs on first use (the global ToolCallError is read,
// or a call rejects) and extends the Error it finds then: a program that replaced Error or
// Object.defineProperty before that gets what it asked for, in its own runtime only.
const preludeSource = `(function () {
	const defineProperty = Object.defineProperty;
	class ToolCallError extends Error {
		constructor(toolName, message) {
			super(message);
			defineProperty(this, "toolName", {value: String(toolName), writable: true, enumerable: true, configurable: true});
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
// set-up cost does not depend on how many tools there are. Its prototype is null: a name the
// Host does not have reads as undefined, __proto__ and constructor included.
type toolsObject struct{ r *run }

var _ goja.DynamicObject = toolsObject{}

func (r *run) newTools() *goja.Object {
	r.bindings = make(map[string]goja.Value)
	o := r.rt.NewDynamicObject(toolsObject{r})
	if err := o.SetPrototype(nil); err != nil {
		panic(err)
	}
	return o
}

func (t toolsObject) Get(name string) goja.Value {
	defer t.r.recoverNative("tools")
	if v, ok := t.r.bindings[name]; ok {
		return v
	}
	if !t.r.host.Has(name) {
		return nil
	}
	v := t.r.newBinding(name)
	t.r.bindings[name] = v
	return v
}

func (t toolsObject) Has(name string) bool {
	defer t.r.recoverNative("tools")
	if _, ok := t.r.bindings[name]; ok {
		return true
	}
	return t.r.host.Has(name)
}

func (t toolsObject) Keys() []string {
	defer t.r.recoverNative("tools")
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
	switch len(call.Arguments) {
	case 0:
		args = []byte("{}")
	case 1:
		b, serr := r.snapshot(call.Arguments[0], snapArgument, r.opts.MaxArgBytes)
		if serr != nil {
			return r.rejected(name, serr.message())
		}
		args = b
	default:
		return r.rejected(name, fmt.Sprintf("tools.%s takes one argument, got %d", name, len(call.Arguments)))
	}
	if r.calls >= r.opts.MaxCalls {
		r.fail(&Failure{Kind: KindLimit, Message: fmt.Sprintf("the program made more than %d tool calls", r.opts.MaxCalls)})
		return goja.Undefined() // the program stops at its next instruction
	}
	r.calls++
	p, resolve, reject := r.rt.NewPromise()
	r.inflight++
	var settled atomic.Bool
	settle := func(s Settlement) {
		if settled.CompareAndSwap(false, true) {
			r.enqueue(func() {
				r.inflight--
				r.applySettlement(name, s, resolve, reject)
			})
		}
	}
	r.dispatch(Call{Seq: r.calls, Name: name, Args: args}, settle)
	return r.rt.ToValue(p)
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
func (r *run) applySettlement(name string, s Settlement, resolve, reject func(any) error) {
	if s.Err != nil {
		tool := s.Err.ToolName
		if tool == "" {
			tool = name
		}
		must(reject(r.newToolCallError(tool, s.Err.Message)))
		return
	}
	if len(s.Value) == 0 {
		must(resolve(goja.Undefined()))
		return
	}
	if jsonDepth(s.Value) > MaxDataDepth {
		must(reject(r.newToolCallError(name, fmt.Sprintf("the tool's value nests deeper than %d levels", MaxDataDepth))))
		return
	}
	v, err := r.fromJSON(s.Value)
	if err != nil {
		must(reject(r.newToolCallError(name, "the tool's value is not valid JSON")))
		return
	}
	must(resolve(v))
}

// rejected returns a promise already rejected with a ToolCallError.
func (r *run) rejected(tool, message string) goja.Value {
	p, _, reject := r.rt.NewPromise()
	must(reject(r.newToolCallError(tool, message)))
	return r.rt.ToValue(p)
}

// newToolCallError builds a ToolCallError with the constructor captured before the program
// ran. Should construction throw anyway, a plain object with the same fields stands in.
func (r *run) newToolCallError(tool, message string) *goja.Object {
	var o *goja.Object
	ex := r.rt.Try(func() {
		var err error
		if o, err = r.rt.New(r.toolCallErrorClass(), r.rt.ToValue(tool), r.rt.ToValue(message)); err != nil {
			panic(err)
		}
	})
	if ex == nil {
		return o
	}
	o = r.rt.NewObject()
	_ = o.DefineDataProperty("name", r.rt.ToValue("ToolCallError"), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = o.DefineDataProperty("toolName", r.rt.ToValue(tool), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	_ = o.DefineDataProperty("message", r.rt.ToValue(message), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return o
}

// native wraps a Go function exposed to JavaScript so that a Go panic in it becomes a
// JavaScript Error instead of crashing the process. goja's own panics (exceptions,
// interrupts, stack overflows) pass through untouched: that is how goja unwinds.
func (r *run) native(where string, fn func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		defer r.recoverNative(where)
		return fn(call)
	}
}

// recoverNative must be deferred directly. See native.
func (r *run) recoverNative(where string) {
	x := recover()
	if x == nil {
		return
	}
	if isGojaPanic(x) {
		panic(x)
	}
	panic(r.rt.NewTypeError(fmt.Sprintf("internal error in %s: %v", where, x)))
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

// fromJSON builds the JavaScript value of JSON text, iteratively, with JSON.parse semantics:
// objects get own data properties (a "__proto__" key included; later duplicates win), numbers
// are IEEE doubles (-0 kept). It never calls into the program's code.
func (r *run) fromJSON(data []byte) (goja.Value, error) {
	type frame struct {
		obj    *goja.Object // an object being filled, or nil for an array
		items  []any        // an array's elements
		key    string
		hasKey bool
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []frame
	var root goja.Value
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if root == nil || len(stack) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return root, nil
		}
		if err != nil {
			return nil, err
		}
		if root != nil {
			return nil, errors.New("data after the JSON value")
		}
		var v goja.Value
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{obj: r.rt.NewObject()})
				continue
			case '[':
				stack = append(stack, frame{})
				continue
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if f.obj != nil {
				v = f.obj
			} else {
				v = r.rt.NewArray(f.items...)
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].obj != nil && !stack[n-1].hasKey {
				stack[n-1].key, stack[n-1].hasKey = t, true
				continue
			}
			v = r.rt.ToValue(t)
		case json.Number:
			f, err := strconv.ParseFloat(string(t), 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return nil, err
			}
			v = r.rt.ToValue(f)
		case bool:
			v = r.rt.ToValue(t)
		case nil:
			v = goja.Null()
		}
		if len(stack) == 0 {
			root = v
			continue
		}
		top := &stack[len(stack)-1]
		if top.obj == nil {
			top.items = append(top.items, v)
			continue
		}
		if err := top.obj.DefineDataProperty(top.key, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			return nil, err
		}
		top.hasKey = false
	}
}
