package sandbox

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/gopool"
)

func TestRunOutcomes(t *testing.T) {
	tests := []struct {
		name, src string
		value     string // want success with this JSON ("" = no value)
		kind      string // or a failure of this kind
		message   []string
		// slow marks a case whose runaway recursion passes through Go frames
		// (a native's callback, an implicit conversion): tens of seconds
		// under the race detector on a busy machine, so it gets minutes.
		slow bool
	}{
		{name: "return value", src: `return {a: [1, "x", true, null]}`, value: `{"a":[1,"x",true,null]}`},
		{name: "no return", src: `const x = 1`},
		{name: "return undefined", src: `return undefined`},
		{name: "await", src: `return await Promise.resolve(3)`, value: `3`},
		{name: "string result", src: `return "plain"`, value: `"plain"`},
		{name: "throw Error", src: `throw new Error("boom")`, kind: KindRuntime, message: []string{"Error: boom"}},
		{name: "throw TypeError", src: `null.x`, kind: KindRuntime, message: []string{"TypeError"}},
		{name: "error position", src: "const b = null;\n\n  return b.x", kind: KindRuntime, message: []string{"TypeError: Cannot read properties of undefined or null (reading 'x')", "(at line 3:12)"}},
		{name: "calling a number", src: "const x = 5\n  x()", kind: KindRuntime, message: []string{"TypeError: x is not a function (at line 2:4)"}},
		{name: "calling a missing method", src: "const o = {a: {}}\nconst y = o.a.bar(1)", kind: KindRuntime, message: []string{"TypeError: o.a.bar is not a function"}},
		{name: "calling a call's missing method", src: "const o = {m() { return {} }}; o.m(1, [2]).go()", kind: KindRuntime, message: []string{"TypeError: o.m(...).go is not a function"}},
		{name: "calling what a call returned", src: "const f = () => 1; f()()", kind: KindRuntime, message: []string{"TypeError: f(...) is not a function"}},
		{name: "calling an element", src: "const a = {b: []}; a.b[0]()", kind: KindRuntime, message: []string{"TypeError: a.b[0] is not a function"}},
		{name: "error position in a function", src: "function f() {\n  throw new Error('deep')\n}\nf()", kind: KindRuntime, message: []string{"Error: deep (at line 2:9)"}},
		{name: "throw custom error", src: `class MyErr extends Error { constructor(m) { super(m); this.name = "MyErr" } } throw new MyErr("bad")`, kind: KindRuntime, message: []string{"MyErr: bad"}},
		{name: "throw string", src: `throw "just text"`, kind: KindRuntime, message: []string{"just text"}},
		{name: "throw number", src: `throw 42`, kind: KindRuntime, message: []string{"42"}},
		{name: "throw object", src: `throw {code: 7}`, kind: KindRuntime, message: []string{"{ code: 7 }"}},
		{name: "throw null", src: `throw null`, kind: KindRuntime, message: []string{"null"}},
		{name: "throw hostile toString", src: `throw {toString() { throw new Error("no") }, get code() { throw 1 }}`, kind: KindRuntime, message: []string{"{ toString: [Function: toString], code: [Getter] }"}},
		{name: "throw error with hostile name", src: `const e = new Error("m"); Object.defineProperty(e, "name", {get() { throw e }}); throw e`, kind: KindRuntime, message: []string{"cannot be described"}},
		{name: "reject after await", src: `await null; return Promise.reject(new RangeError("late"))`, kind: KindRuntime, message: []string{"RangeError: late"}},
		{name: "never settles", src: `await new Promise(() => {})`, kind: KindRuntime, message: []string{"never settled"}},
		{name: "never settles after a timer", src: `await new Promise(r => setTimeout(r, 1)); await new Promise(() => {})`, kind: KindRuntime, message: []string{"never settled"}},
		{name: "ArrayBuffer transfer past the cap", src: `return new ArrayBuffer(1).transfer(2 ** 40)`, kind: KindLimit, message: []string{"ArrayBuffer.prototype.transfer would allocate"}},
		{name: "recursion 9,000 deep", src: `function f(n) { return n === 0 ? 0 : 1 + f(n - 1) } return f(9000)`, value: `9000`},
		{name: "recursion through a built-in's callback", src: `function f(n) { return n === 0 ? 0 : 1 + [n].map(x => f(x - 1))[0] } return f(3000)`, value: `3000`},
		{name: "runaway recursion through a built-in's callback", src: `function f(n) { return [n].map(f) } return f(0)`, kind: KindLimit, message: []string{"RangeError: Maximum call stack size exceeded"}, slow: true},
		{name: "runaway recursion through an implicit toString", src: `const o = {toString() { return "" + o }}; return "" + o`, kind: KindLimit, message: []string{"RangeError: Maximum call stack size exceeded"}, slow: true},
		{name: "recursion", src: `function f(n) { return f(n + 1) + 1 } return f(0)`, kind: KindLimit, message: []string{"RangeError: Maximum call stack size exceeded", "call stack depth of 10000"}},
		{name: "recursion caught as V8's RangeError", src: `function f() { f() } try { f() } catch (e) { return [e instanceof RangeError, e.message] }`, value: `[true, "Maximum call stack size exceeded"]`},
		{name: "recursion caught at the deepest try", src: `function f(n) { try { return f(n + 1) } catch (e) { return n } } return f(0) > 4000`, value: `true`},
		{name: "recursion caught: finally runs, the catch sees the error", src: `function f() { return f() + 1 } const got = []; try { try { f() } finally { got.push("finally") } } catch (e) { got.push(e.name) } return got`, value: `["finally", "RangeError"]`},
		{name: "recursion not caught through new", src: `class A { constructor() { new A() } } try { new A() } catch (e) { return "caught" }`, kind: KindLimit, message: []string{"Maximum call stack size exceeded"}},
		{name: "recursion through native callbacks", src: `function f() { [0].map(f) } f()`, kind: KindLimit, slow: true},
		{name: "recursion in a microtask", src: `function f() { f() } await null; f()`, kind: KindLimit},
		{name: "throw outside the body", src: `}); throw new Error("top"); (async function () {`, kind: KindRuntime, message: []string{"Error: top"}},
		{name: "no require", src: `return typeof require + typeof process + typeof module + typeof exports + typeof Buffer + typeof fetch`, value: `"undefinedundefinedundefinedundefinedundefinedundefined"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{}
			if tt.slow {
				opts.Timeout = 3 * time.Minute
			}
			res := runLang(t, tt.src, JavaScript, nil, opts)
			if tt.kind != "" {
				wantFailure(t, res, tt.kind, tt.message...)
				return
			}
			if tt.value == "" {
				if res.Err != nil || res.Value != nil {
					t.Fatalf("got value %s, err %v; want no value and no error", res.Value, res.Err)
				}
				return
			}
			wantValue(t, res, tt.value)
		})
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	host := newFakeHost("math_add", "my-mcp.tool")
	res := runJS(t, `
		const a = await tools.math_add({a: 2, b: 3});
		const b = await tools["my-mcp.tool"]();
		return [a, b];`, host)
	wantValue(t, res, `[{"tool":"math_add","args":{"a":2,"b":3}},{"tool":"my-mcp.tool","args":{}}]`)
	calls := host.recorded()
	if len(calls) != 2 || calls[0].Seq != 1 || calls[1].Seq != 2 || calls[1].Name != "my-mcp.tool" || string(calls[1].Args) != "{}" {
		t.Fatalf("calls = %+v", calls)
	}
}

func TestPromiseAllSettledOutOfOrder(t *testing.T) {
	// Each call settles on its own goroutine once all three are in flight, last first.
	var wg sync.WaitGroup
	wg.Add(3)
	host := newFakeHost("slow")
	host.handle = func(c Call, settle func(Settlement)) {
		wg.Done()
		go func() {
			wg.Wait()
			time.Sleep(time.Duration(3-c.Seq) * 5 * time.Millisecond)
			settle(Settlement{Value: []byte(fmt.Sprintf(`{"seq":%d}`, c.Seq))})
		}()
	}
	res := runJS(t, `
		const order = [];
		const track = (p) => p.then(v => { order.push(v.seq); return v.seq });
		const all = await Promise.all([track(tools.slow({i: 1})), track(tools.slow({i: 2})), track(tools.slow({i: 3}))]);
		console.log("done");
		return {all, order};`, host)
	wantValue(t, res, `{"all":[1,2,3],"order":[3,2,1]}`)
	if len(res.Logs) != 1 || res.Logs[0] != "done" {
		t.Fatalf("logs = %q", res.Logs)
	}
}

func TestToolCallErrorCaught(t *testing.T) {
	host := newFakeHost("util_fail")
	host.handle = func(c Call, settle func(Settlement)) {
		go settle(Settlement{Err: &CallError{Message: "boom"}})
	}
	res := runJS(t, `
		try { await tools.util_fail({message: "boom"}) }
		catch (e) {
			console.log(e.name, e.toolName, e.message);
			return [e instanceof ToolCallError, e instanceof Error, String(e)];
		}`, host)
	wantValue(t, res, `[true,true,"ToolCallError: boom"]`)
	if len(res.Logs) != 1 || res.Logs[0] != "ToolCallError util_fail boom" {
		t.Fatalf("logs = %q", res.Logs)
	}
}

func TestToolCallErrorUncaught(t *testing.T) {
	host := newFakeHost("util_fail")
	host.handle = func(c Call, settle func(Settlement)) {
		settle(Settlement{Err: &CallError{ToolName: "util_fail", Message: "it broke"}})
	}
	wantFailure(t, runJS(t, `await tools.util_fail()`, host), KindRuntime, "ToolCallError: it broke", "util_fail")
}

func TestToolCallErrorClassIsLazyAndReplaceable(t *testing.T) {
	host := newFakeHost("f")
	host.handle = func(c Call, settle func(Settlement)) { settle(Settlement{Err: &CallError{Message: "x"}}) }
	// The program replaces the global before any call fails: the rejection still carries a
	// genuine ToolCallError, and the program's own value stays in place.
	res := runJS(t, `
		const Original = ToolCallError;
		ToolCallError = 5;
		try { await tools.f() } catch (e) { return [e instanceof Original, e.name, ToolCallError] }`, host)
	wantValue(t, res, `[true,"ToolCallError",5]`)
}

func TestToolsObject(t *testing.T) {
	host := newFakeHost("a", "b-c", "__proto__", "constructor")
	res := runJS(t, `
		const keys = Object.keys(tools);
		const inOps = ["a" in tools, "zzz" in tools, "toString" in tools];
		const types = [typeof tools.a, typeof tools.zzz, typeof tools.toString, typeof tools.hasOwnProperty];
		const protoIsTool = typeof tools.__proto__ === "function" && typeof tools.constructor === "function";
		const identity = tools.a === tools.a;
		const names = [tools.a.name, tools["b-c"].name, tools.__proto__.name];
		let assign = "no error";
		try { "use strict"; (function () { "use strict"; tools.a = 1 })() } catch (e) { assign = e.name }
		let construct = "no error";
		try { new tools.a() } catch (e) { construct = e.name }
		let missing = "no error";
		try { await tools.zzz() } catch (e) { missing = [e.name, e.toolName, e.code] }
		const viaProto = await tools.__proto__({x: 1});
		return {keys, inOps, types, protoIsTool, identity, names, assign, construct, missing, text: String(tools), tag: Object.prototype.toString.call(tools), thenable: typeof tools.then, viaProto};`, host)
	wantValue(t, res, `{
		"keys":["a","b-c","__proto__","constructor"],
		"inOps":[true,false,false],
		"types":["function","function","undefined","undefined"],
		"protoIsTool":true, "identity":true, "names":["a","b-c","__proto__"],
		"assign":"TypeError", "construct":"TypeError", "missing":["ToolCallError","zzz","UNKNOWN_TOOL"],
		"text":"[object Tools]", "tag":"[object Tools]", "thenable":"undefined",
		"viaProto":{"tool":"__proto__","args":{"x":1}}}`)
}

func TestToolsObjectWithoutProtoNames(t *testing.T) {
	// Without tools of those names, __proto__ and constructor are simply absent: no way to
	// Object.prototype or Function through tools.
	res := runJS(t, `return [tools.__proto__ === undefined, tools.constructor === undefined, tools["__proto__"] === undefined, Object.getPrototypeOf(Object.getPrototypeOf(tools)) === null]`, newFakeHost("a"))
	wantValue(t, res, `[true,true,true,true]`)
}

func TestHostSettlesEarlyTwiceAndLate(t *testing.T) {
	var saved atomic.Value
	host := newFakeHost("t")
	host.handle = func(c Call, settle func(Settlement)) {
		settle(Settlement{Value: []byte(`1`)})
		settle(Settlement{Value: []byte(`2`)}) // ignored
		saved.Store(settle)
	}
	res := runJS(t, `const a = await tools.t(); const b = await tools.t(); return [a, b]`, host)
	wantValue(t, res, `[1,1]`)
	saved.Load().(func(Settlement))(Settlement{Value: []byte(`3`)}) // after the run: a no-op
}

func TestSettlementValues(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  string
	}{
		{"object", `{"a": [1, 2.5, -0, "s", null, true]}`, `{"a":[1,2.5,-0,"s",null,true]}`},
		{"proto key is an own property", `{"__proto__": {"polluted": true}}`, `{"__proto__":{"polluted":true}}`},
		{"duplicate keys: last wins", `{"a": 1, "a": 2}`, `{"a":2}`},
		{"empty means undefined", ``, `"undefined"`},
		{"big integers become numbers", `12345678901234567890`, `12345678901234567000`},
		{"unicode", `"h\u00e9 \ud83d\ude00"`, `"hé 😀"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := newFakeHost("v")
			host.handle = func(c Call, settle func(Settlement)) { settle(Settlement{Value: []byte(tt.value)}) }
			res := runJS(t, `const v = await tools.v(); if (v === undefined) return "undefined"; if (typeof v === "object" && v !== null) { if (Object.prototype.polluted) throw new Error("polluted"); } return v`, host)
			wantValue(t, res, tt.want)
		})
	}
	for _, bad := range []string{`{`, `{"a":1} {"b":2}`, `nope`, strings.Repeat("[", MaxDataDepth+1) + strings.Repeat("]", MaxDataDepth+1)} {
		host := newFakeHost("v")
		host.handle = func(c Call, settle func(Settlement)) { settle(Settlement{Value: []byte(bad)}) }
		res := runJS(t, `try { await tools.v() } catch (e) { return [e.name, e.toolName] }`, host)
		wantValue(t, res, `["ToolCallError","v"]`)
	}
}

func TestCallLimit(t *testing.T) {
	host := newFakeHost("t")
	res := runLang(t, `
		for (let i = 0; i < 10; i++) {
			try { await tools.t({i}) } catch (e) { console.log("caught", e.message) }
		}
		return "finished"`, JavaScript, host, Options{MaxCalls: 3})
	wantFailure(t, res, KindLimit, "more than 3 tool calls")
	if n := len(host.recorded()); n != 3 {
		t.Fatalf("host saw %d calls, want 3", n)
	}
	if len(res.Logs) != 0 {
		t.Fatalf("the program caught the limit: %q", res.Logs)
	}
}

// The arguments of a run's calls are bounded together: the call that passes the bound is not
// dispatched, and the run ends with a limit failure the program cannot catch.
func TestCallBytesLimit(t *testing.T) {
	host := newFakeHost("t")
	res := runLang(t, `
		const v = "x".repeat(300)
		for (let i = 0; i < 10; i++) {
			try { await tools.t({v}) } catch (e) { console.log("caught", e.message) }
		}
		return "finished"`, JavaScript, host, Options{MaxCallBytes: 1000})
	wantFailure(t, res, KindLimit, "more than 1000 bytes of arguments")
	calls := host.recorded()
	total := 0
	for _, c := range calls {
		total += len(c.Args)
	}
	if len(calls) != 3 || total > 1000 {
		t.Fatalf("host saw %d calls of %d bytes of arguments, want 3 within 1000", len(calls), total)
	}
	if len(res.Logs) != 0 {
		t.Fatalf("the program caught the limit: %q", res.Logs)
	}
	// The default leaves ordinary programs alone.
	res = runJS(t, `let n = 0; for (let i = 0; i < 100; i++) n += (await tools.t({v: "x".repeat(1000)})) ? 1 : 0; return n`, host)
	if res.Err != nil {
		t.Fatalf("100 calls of 1 KB under the default bound: %v", res.Err)
	}
}

func TestTimeouts(t *testing.T) {
	tests := []struct{ name, src string }{
		{"busy loop", `for (;;) {}`},
		{"busy loop in catch", `for (;;) { try { throw 1 } catch (e) { for (;;) {} } }`},
		{"busy loop in finally", `try { for (;;) {} } finally { for (;;) {} }`},
		{"microtask flood", `for (;;) await null`},
		{"promise chain flood", `const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {})`},
		{"long timer", `await new Promise(r => setTimeout(r, 60000))`},
		{"busy getter during a call", `await tools.t({get x() { for (;;) {} }})`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runLang(t, tt.src, JavaScript, newFakeHost("t"), Options{Timeout: 100 * time.Millisecond})
			wantFailure(t, res, KindTimeout, "100ms")
		})
	}
}

func TestHostThatNeverSettlesTimesOut(t *testing.T) {
	host := newFakeHost("hang")
	host.handle = func(Call, func(Settlement)) {}
	res := runLang(t, `await tools.hang()`, JavaScript, host, Options{Timeout: 50 * time.Millisecond})
	wantFailure(t, res, KindTimeout)
}

func TestCancellation(t *testing.T) {
	t.Run("already cancelled", func(t *testing.T) {
		host := newFakeHost("t")
		p, err := Compile(`await tools.t(); return 1`, JavaScript)
		if err != nil {
			t.Fatal(err)
		}
		res := Run(ctxCancelled(), p, host, Options{})
		wantFailure(t, res, KindCancelled)
		if len(host.recorded()) != 0 {
			t.Fatal("a cancelled run dispatched a call")
		}
	})
	t.Run("during a busy loop", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		host := newFakeHost("t")
		host.handle = func(c Call, settle func(Settlement)) {
			settle(Settlement{Value: []byte(`1`)})
			cancel(errors.New("user pressed stop"))
		}
		p, _ := Compile(`await tools.t(); for (;;) {}`, JavaScript)
		res := Run(ctx, p, host, Options{})
		wantFailure(t, res, KindCancelled, "user pressed stop")
	})
	t.Run("while awaiting a call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		host := newFakeHost("t")
		host.handle = func(c Call, settle func(Settlement)) { cancel() }
		p, _ := Compile(`await tools.t()`, JavaScript)
		wantFailure(t, Run(ctx, p, host, Options{}), KindCancelled)
	})
}

func TestSettleRacesWithTimeout(t *testing.T) {
	// Settlements arrive from goroutines around the deadline; under -race this must be clean,
	// and every run must end with a value or a timeout, nothing else.
	host := newFakeHost("t")
	host.handle = func(c Call, settle func(Settlement)) {
		go func() {
			time.Sleep(time.Duration(c.Seq%5) * time.Millisecond)
			settle(Settlement{Value: []byte(`1`)})
			settle(Settlement{Value: []byte(`2`)})
		}()
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := runLang(t, `let n = 0; for (;;) n += await tools.t()`, JavaScript, host, Options{Timeout: time.Duration(5+i) * time.Millisecond})
			if res.Err == nil || res.Err.Kind != KindTimeout {
				t.Errorf("run %d: %+v", i, res.Err)
			}
		}()
	}
	wg.Wait()
}

func TestRunsAreIsolated(t *testing.T) {
	res := runJS(t, `
		Object.prototype.polluted = 1;
		Array.prototype.push = null;
		JSON.parse = () => "tampered";
		globalThis.leftover = true;
		console.log = null;
		return 1`, nil)
	wantValue(t, res, `1`)
	res = runJS(t, `
		const a = []; a.push(1);
		return [({}).polluted === undefined, typeof leftover, JSON.parse("2"), typeof console.log, a.length]`, nil)
	wantValue(t, res, `[true,"undefined",2,"function",1]`)
}

func TestConcurrentRuns(t *testing.T) {
	host := newFakeHost("echo")
	host.handle = func(c Call, settle func(Settlement)) { go settle(Settlement{Value: c.Args}) }
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := fmt.Sprintf(`globalThis.mine = %d; const v = await tools.echo({i: mine}); await new Promise(r => setTimeout(r, 1)); console.log(v.i); return v.i + mine`, i)
			res := runJS(t, src, host)
			if res.Err != nil || string(res.Value) != fmt.Sprint(2*i) || len(res.Logs) != 1 || res.Logs[0] != fmt.Sprint(i) {
				t.Errorf("run %d: %+v", i, res)
			}
		}()
	}
	wg.Wait()
}

func TestTimers(t *testing.T) {
	res := runJS(t, `
		const order = [];
		const t1 = setTimeout(() => order.push("cleared"), 5);
		clearTimeout(t1);
		clearTimeout(12345);
		clearTimeout(undefined);
		setTimeout((a, b) => order.push(a + b), 10, "x", "y");
		await new Promise(r => setTimeout(r, 20));
		setTimeout(() => order.push("zero"));
		await new Promise(r => setTimeout(r, 1));
		return [order, typeof t1];`, nil)
	wantValue(t, res, `[["xy","zero"],"number"]`)

	wantFailure(t, runJS(t, `setTimeout(() => { throw new Error("in timer") }, 1); await new Promise(r => setTimeout(r, 50))`, nil),
		KindRuntime, "setTimeout callback", "Error: in timer")

	res = runJS(t, `try { setTimeout("code string", 1) } catch (e) { return e.name }`, nil)
	wantValue(t, res, `"TypeError"`)
}

func TestTimersDoNotOutliveTheRun(t *testing.T) {
	host := newFakeHost("late")
	res := runJS(t, `setTimeout(() => tools.late(), 30); return "done"`, host)
	wantValue(t, res, `"done"`)
	time.Sleep(60 * time.Millisecond)
	if n := len(host.recorded()); n != 0 {
		t.Fatalf("a timer fired after the run ended and called the host %d times", n)
	}
}

func TestTooManyTimers(t *testing.T) {
	res := runJS(t, `for (;;) setTimeout(() => {}, 100000)`, nil)
	wantFailure(t, res, KindLimit, "timers pending")
}

func TestRunWithoutProgram(t *testing.T) {
	wantFailure(t, Run(context.Background(), nil, nil, Options{}), KindRuntime)
}

// A run leaves no goroutine behind but those waiting in gopool for the next.
func TestNoGoroutineLeak(t *testing.T) {
	busy := func() int { return runtime.NumGoroutine() - gopool.Idle() }
	before := busy()
	host := newFakeHost("t")
	for range 20 {
		runJS(t, `setTimeout(() => {}, 100000); await tools.t(); return 1`, host)
	}
	deadline := time.Now().Add(2 * time.Second)
	for busy() > before+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := busy(); n > before+2 {
		t.Fatalf("%d goroutines busy before, %d after", before, n)
	}
}
