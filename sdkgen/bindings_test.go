package sdkgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/dop251/goja"
)

// fakeHost implements the host contract of bindings.js over a goja runtime: tool calls settle at
// once, and every call is recorded with its argument as JSON.
type fakeHost struct {
	vm         *goja.Runtime
	names      []string
	hasCalls   int
	namesCalls int
	calls      []string // "name args-as-JSON"
}

func (h *fakeHost) object() *goja.Object {
	o := h.vm.NewObject()
	must(o.Set("has", func(name string) bool {
		h.hasCalls++
		_, found := slices.BinarySearch(h.names, name)
		return found
	}))
	must(o.Set("names", func() []string {
		h.namesCalls++
		return slices.Clone(h.names)
	}))
	must(o.Set("call", func(call goja.FunctionCall) goja.Value {
		name := call.Argument(0).String()
		arg := call.Argument(1)
		encoded := "undefined"
		if !goja.IsUndefined(arg) {
			b, err := json.Marshal(arg.Export())
			if err != nil {
				panic(h.vm.NewTypeError(err.Error()))
			}
			encoded = string(b)
		}
		h.calls = append(h.calls, name+" "+encoded)

		promise, resolve, reject := h.vm.NewPromise()
		switch name {
		case "math_add":
			args := arg.Export().(map[string]any)
			must(resolve(map[string]any{"sum": args["a"].(int64) + args["b"].(int64)}))
		case "util_fail":
			must(reject(h.vm.NewGoError(errors.New("boom"))))
		case "throws":
			panic(h.vm.NewTypeError("argument is not JSON"))
		case "reject_string":
			must(reject("plain reason"))
		case "reject_hostile":
			v, err := h.vm.RunString(`({ get message() { throw new Error("gotcha") } })`)
			must(err)
			must(reject(v))
		default:
			must(resolve(map[string]any{"called": name}))
		}
		return h.vm.ToValue(promise)
	}))
	return o
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// installBindings evaluates the binding program of set in a fresh runtime and installs it over
// a fake host serving the set's tools.
func installBindings(t *testing.T, set *Set) (*goja.Runtime, *fakeHost) {
	t.Helper()
	prog, err := goja.Compile("bindings.js", string(Bindings(set)), true)
	if err != nil {
		t.Fatalf("compile bindings: %v", err)
	}
	vm := goja.New()
	v, err := vm.RunProgram(prog)
	if err != nil {
		t.Fatalf("evaluate bindings: %v", err)
	}
	install, ok := goja.AssertFunction(v)
	if !ok {
		t.Fatalf("bindings evaluate to %v, not a function", v)
	}
	host := &fakeHost{vm: vm}
	for _, tool := range set.Tools() {
		host.names = append(host.names, tool.Name)
	}
	ret, err := install(goja.Undefined(), host.object())
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	if !goja.IsUndefined(ret) {
		t.Fatalf("install returned %v, want undefined", ret)
	}
	return vm, host
}

// runAsync runs body as the body of an async function and fails the test if it rejects.
func runAsync(t *testing.T, vm *goja.Runtime, body string) {
	t.Helper()
	src := `"use strict";
function assert(cond, what) { if (!cond) throw new Error("assertion failed: " + what); }
function assertThrows(fn, type, what) {
  try { fn(); } catch (e) { assert(e instanceof type, what + ": threw " + e); return; }
  throw new Error("assertion failed: " + what + " did not throw");
}
(async () => {` + body + `})()`
	v, err := vm.RunString(src)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		t.Fatalf("got %v, want a promise", v)
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
	case goja.PromiseStateRejected:
		t.Fatalf("%v", p.Result())
	default:
		t.Fatalf("the program did not settle")
	}
}

func bindingTestSet() *Set {
	var tools []Tool
	for _, name := range []string{
		"math_add", "util_fail", "throws", "reject_string", "reject_hostile",
		"__proto__", "constructor", "my-mcp.tool",
	} {
		tools = append(tools, Tool{Name: name})
	}
	return NewSet(tools)
}

func TestBindings(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		calls []string // what the host must have seen, in order; nil: not checked
	}{
		{
			name:  "a call resolves with the tool's value",
			body:  `const r = await tools.math_add({ a: 2, b: 3 }); assert(r.sum === 5, "sum");`,
			calls: []string{`math_add {"a":2,"b":3}`},
		},
		{
			name: "concurrent calls",
			body: `const [x, y] = await Promise.all([tools.math_add({ a: 1, b: 1 }), tools.math_add({ a: 2, b: 2 })]);
				assert(x.sum === 2 && y.sum === 4, "sums");`,
			calls: []string{`math_add {"a":1,"b":1}`, `math_add {"a":2,"b":2}`},
		},
		{
			name: "a rejection becomes a ToolCallError",
			body: `try { await tools.util_fail({ message: "boom" }); assert(false, "no rejection"); }
				catch (e) {
				  assert(e instanceof ToolCallError, "instanceof ToolCallError");
				  assert(e instanceof Error, "instanceof Error");
				  assert(e.name === "ToolCallError", "name " + e.name);
				  assert(e.toolName === "util_fail", "toolName " + e.toolName);
				  assert(e.message === "boom", "message " + e.message);
				  assert(String(e) === "ToolCallError: boom", "String(e) " + String(e));
				}`,
		},
		{
			name: "a synchronous throw becomes a rejection",
			body: `const p = tools.throws({});
				assert(p instanceof Promise, "returns a promise");
				try { await p; assert(false, "no rejection"); }
				catch (e) { assert(e instanceof ToolCallError && e.toolName === "throws" && e.message === "argument is not JSON", "error " + e); }`,
		},
		{
			name: "a string reason is the message",
			body: `try { await tools.reject_string({}); } catch (e) { assert(e.message === "plain reason", "message " + e.message); }`,
		},
		{
			name: "a hostile reason gives a generic message",
			body: `try { await tools.reject_hostile({}); } catch (e) {
				  assert(e instanceof ToolCallError && e.message === "tool call failed", "message " + e.message); }`,
		},
		{
			name:  "a call without argument passes {}",
			body:  `await tools.constructor();`,
			calls: []string{`constructor {}`},
		},
		{
			name:  "an explicit undefined argument reaches the host",
			body:  `await tools.constructor(undefined);`,
			calls: []string{`constructor undefined`},
		},
		{
			name: "exotic names are ordinary bindings",
			body: `assert(typeof tools.__proto__ === "function", "__proto__");
				assert(typeof tools.constructor === "function", "constructor");
				const r = await tools["my-mcp.tool"]({});
				assert(r.called === "my-mcp.tool", "called " + r.called);
				await tools.__proto__({ k: 1 });`,
			calls: []string{`my-mcp.tool {}`, `__proto__ {"k":1}`},
		},
		{
			name: "unknown names are absent",
			body: `assert(tools.nope === undefined, "nope");
				assert(tools.toString === undefined, "toString");
				assert(tools[Symbol.iterator] === undefined, "Symbol.iterator");
				assert(!("nope" in tools), "in");
				assert("math_add" in tools, "math_add in");
				assert(Object.getOwnPropertyDescriptor(tools, "nope") === undefined, "descriptor");
				assert(Object.getPrototypeOf(tools) === null, "prototype");`,
			calls: []string{},
		},
		{
			name: "enumeration lists the tools in order",
			body: `const keys = JSON.stringify(Object.keys(tools));
				assert(keys === JSON.stringify(["__proto__","constructor","math_add","my-mcp.tool","reject_hostile","reject_string","throws","util_fail"]), keys);
				const d = Object.getOwnPropertyDescriptor(tools, "math_add");
				assert(d.value === tools.math_add && d.enumerable && !d.writable, "descriptor");`,
			calls: []string{},
		},
		{
			name: "bindings are stable, named and frozen",
			body: `assert(tools.math_add === tools.math_add, "identity");
				assert(tools.math_add.name === "math_add", "name " + tools.math_add.name);
				assert(tools["my-mcp.tool"].name === "my-mcp.tool", "exotic name");
				assert(Object.isFrozen(tools.math_add), "frozen");`,
		},
		{
			name: "tools and ToolCallError cannot be changed",
			body: `assertThrows(() => { tools.math_add = 1; }, TypeError, "set");
				assertThrows(() => { tools.extra = 1; }, TypeError, "add");
				assertThrows(() => { delete tools.math_add; }, TypeError, "delete");
				assertThrows(() => { Object.defineProperty(tools, "x", { value: 1 }); }, TypeError, "define");
				assertThrows(() => { Object.setPrototypeOf(tools, {}); }, TypeError, "setPrototypeOf");
				assertThrows(() => { Object.preventExtensions(tools); }, TypeError, "preventExtensions");
				assertThrows(() => { globalThis.tools = {}; }, TypeError, "global tools");
				assertThrows(() => { globalThis.ToolCallError = 1; }, TypeError, "global ToolCallError");
				assertThrows(() => { ToolCallError.prototype.name = "x"; }, TypeError, "prototype name");
				assert(Object.isFrozen(ToolCallError) && Object.isFrozen(ToolCallError.prototype), "frozen class");
				assert(typeof tools.math_add === "function", "still there");`,
			calls: []string{},
		},
		{
			name: "tools converts to a string",
			body: "assert(String(tools) === \"[object Tools]\", String(tools)); assert(`${tools}` === \"[object Tools]\", \"template\");",
		},
		{
			name: "ToolCallError can be constructed",
			body: `const e = new ToolCallError("t", "m");
				assert(e instanceof Error && e.name === "ToolCallError" && e.toolName === "t" && e.message === "m", "fields");
				assert(Object.keys(e).includes("toolName"), "toolName enumerable");`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vm, host := installBindings(t, bindingTestSet())
			runAsync(t, vm, tc.body)
			if tc.calls != nil && !slices.Equal(host.calls, tc.calls) && !(len(tc.calls) == 0 && len(host.calls) == 0) {
				t.Errorf("host calls %q, want %q", host.calls, tc.calls)
			}
		})
	}
}

// TestBindingsInstallIsIndependentOfToolCount pins that installing does no per-tool work: the
// host is not asked about any tool until the program looks one up.
func TestBindingsInstallIsIndependentOfToolCount(t *testing.T) {
	tools := make([]Tool, 1000)
	for i := range tools {
		tools[i] = Tool{Name: fmt.Sprintf("tool_%04d", i)}
	}
	vm, host := installBindings(t, NewSet(tools))
	if host.hasCalls != 0 || host.namesCalls != 0 {
		t.Fatalf("install asked the host %d has() and %d names() questions", host.hasCalls, host.namesCalls)
	}
	runAsync(t, vm, `await tools.tool_0999({});`)
	if host.hasCalls != 1 || host.namesCalls != 0 || !slices.Equal(host.calls, []string{"tool_0999 {}"}) {
		t.Fatalf("one call made %d has() and %d names() questions and calls %q", host.hasCalls, host.namesCalls, host.calls)
	}
}

// TestBindingsHeaderIsInert pins that no tool name can break out of the header comment: the
// program still evaluates to the install function for the exotic names set.
func TestBindingsHeaderIsInert(t *testing.T) {
	vm, _ := installBindings(t, NewSet(exoticNameTools()))
	runAsync(t, vm, `const r = await tools["para\u2028sep"]({}); assert(r.called === "para\u2028sep", "called");`)
}
