package sandbox

import (
	"strings"
	"testing"
)

// TestTryCallsKeepSemantics: calls in try blocks go through natives (trycall.go) and behave
// as direct calls: this, spread, getters, generators, super, eval, optional chains, errors.
// Values as Node 24 gives them (but for this in a sloppy function, which Node's module
// wrapper makes strict).
func TestTryCallsKeepSemantics(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"this of a plain call", `function sloppy() { return this === globalThis } function strict() { "use strict"; return this } try { return [sloppy(), strict()] } catch (e) { return e.message }`, `[true, null]`},
		{"methods, brackets, symbols, getters", `const s = Symbol("s"); const o = {v: 5, m(x) { return this.v + x }, get fn() { return (y) => y * 3 }, [s]() { return "sym" }}; try { return [o.m(1), o["m"](2), o.fn(4), o[s](), "abc".toUpperCase(), o.m.call({v: 100}, 1)] } catch (e) { return e.message }`, `[6, 7, 12, "sym", "ABC", 101]`},
		{"spread and generators", `function* g() { yield 1; yield 2 } try { return [Math.max(...[1, 9, 3]), [...g()], Array.from(g())] } catch (e) { return e.message }`, `[9, [1, 2], [1, 2]]`},
		{"super and eval", `class K { m(x) { return x } } class L extends K { m(x) { try { return super.m(x) * 10 } catch (e) { return e.message } } } let y = 1; try { return [new L().m(2), eval("y + 1")] } catch (e) { return e.message }`, `[20, 2]`},
		{"optional chains short-circuit", `const o = {m() { return 1 }}; try { return [o?.m(), o.none?.(), o.nothing?.x()] } catch (e) { return e.message }`, `[1, null, null]`},
		{"a getter runs before the arguments", `const order = []; const o = {get m() { order.push("get"); return () => order.push("call") }}; try { o.m(order.push("arg")) } catch {} return order`, `["get", "arg", "call"]`},
		{"calling what is not a function", `const o = {a: {}}; const got = []; try { o.nope() } catch (e) { got.push(e.message) } try { o.a.b.c() } catch (e) { got.push(e.name) } try { (1)() } catch (e) { got.push(e.message) } try { o.a["x"]() } catch (e) { got.push(e.message) } return got`, `["o.nope is not a function", "TypeError", "1 is not a function", "o.a.x is not a function"]`},
		{"V8's names of callees", `const o = {a: {}}, k = "z", f = () => 1, got = []; for (const c of [() => { try { o[k]() } catch (e) { got.push(e.message) } }, () => { try { o[0]() } catch (e) { got.push(e.message) } }, () => { try { f()() } catch (e) { got.push(e.message) } }, () => { try { null() } catch (e) { got.push(e.message) } }]) c(); return got`,
			`["o[k] is not a function", "o[0] is not a function", "f(...) is not a function", "null is not a function"]`},
		{"a class called without new", `class K {} try { K() } catch (e) { return e.name }`, `"TypeError"`},
		{"await in a try", `async function f(x) { return x * 2 } try { return await f(21) } catch (e) { return e.message }`, `42`},
		{"tools calls stay direct", `try { return typeof tools } catch (e) { return e.message }`, `"object"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantValue(t, runJS(t, tt.src, nil), tt.want)
		})
	}
}

// TestTryCallsOverflow: a stack overflow under a call in a try is V8's RangeError there.
func TestTryCallsOverflow(t *testing.T) {
	t.Run("TypeScript", func(t *testing.T) {
		res := runLang(t, `function f(n: number): number { return f(n + 1) + 1 }
try { f(0) } catch (e: unknown) { return (e as Error).name }`, TypeScript, nil, Options{})
		wantValue(t, res, `"RangeError"`)
	})
	t.Run("a program that reads arguments is left alone", func(t *testing.T) {
		res := runJS(t, `function f() { return f() } const n = arguments.length; try { f() } catch (e) { return "caught" }`, nil)
		if res.Err == nil || res.Err.Kind != KindLimit {
			t.Fatalf("want a limit failure, got %s %v", res.Value, res.Err)
		}
	})
	t.Run("the error's position is the program's", func(t *testing.T) {
		res := runJS(t, "const o = {}\ntry {\n  o.missing(1)\n} catch (e) { throw e }", nil)
		if res.Err == nil || !strings.Contains(res.Err.Message, "o.missing is not a function (at line 3:") {
			t.Fatalf("failure = %v", res.Err)
		}
	})
}
