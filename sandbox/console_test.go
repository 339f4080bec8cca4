package sandbox

import (
	"fmt"
	"strings"
	"testing"
)

func TestConsoleFormatting(t *testing.T) {
	tests := []struct{ name, args, want string }{
		{"strings raw, joined by spaces", `"a", "b c"`, `a b c`},
		{"no arguments", ``, ``},
		{"primitives", `1, -0, 1.5, true, null, undefined, 10n, Symbol("s"), NaN`, `1 -0 1.5 true null undefined 10n Symbol(s) NaN`},
		{"object", `{a: 1, "b-c": "x", d: [1, "two"], e: {}}`, `{ a: 1, 'b-c': 'x', d: [ 1, 'two' ], e: {} }`},
		{"nested strings quoted and escaped", `["it's", "line\nbreak"]`, `[ "it's", 'line\nbreak' ]`},
		{"empty array", `[]`, `[]`},
		{"depth limit", `{a: {b: {c: {d: 1}}}, l: [[[[1]]]]}`, `{ a: { b: { c: [Object] } }, l: [ [ [Array] ] ] }`},
		{"circular", `(() => { const o = {x: 1}; o.self = o; return o })()`, `{ x: 1, self: [Circular] }`},
		{"functions", `function named() {}, () => 1, class K {}`, `[Function: named] [Function (anonymous)] [Function: K]`},
		{"holes", `[1, , , 4]`, `[ 1, <2 empty items>, 4 ]`},
		{"long array", `Array.from({length: 105}, (_, i) => i)`, `[ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, ... 5 more items ]`},
		{"huge sparse array", `(() => { const a = []; a.length = 4294967295; return a })()`, `[ <10000 empty items>, ... 4294957295 more items ]`},
		{"error", `new TypeError("bad")`, `TypeError: bad`},
		{"tool call error", `new ToolCallError("util_fail", "boom")`, `ToolCallError: boom { toolName: 'util_fail', code: 'TOOL_FAILED' }`},
		{"nested error", `{e: new Error("x")}`, `{ e: [Error: x] }`},
		{"date", `new Date(0)`, `1970-01-01T00:00:00.000Z`},
		{"invalid date", `new Date(NaN)`, `Invalid Date`},
		{"regexp", `/a+/gi`, `/a+/gi`},
		{"boxed", `new String("s"), new Number(2)`, `[String: 's'] [Number: 2]`},
		{"map and set", `new Map([["k", 1]]), new Set([1, "a"]), new Map()`, `Map(1) { 'k' => 1 } Set(2) { 1, 'a' } Map(0) {}`},
		{"class instance", `new (class Point { constructor() { this.x = 1 } })()`, `Point { x: 1 }`},
		{"null prototype", `Object.assign(Object.create(null), {a: 1})`, `[Object: null prototype] { a: 1 }`},
		{"promise", `Promise.resolve(3), new Promise(() => {})`, `Promise { 3 } Promise { <pending> }`},
		{"proxy", `new Proxy({}, {get() { throw new Error("trap") }})`, `[Proxy]`},
		{"format directives", `"%s is %d years and %i, %f; %j %o %% %c|%x", "Bob", 42.5, 7.9, "1.5", {a: 1}, [1], "color: red"`, `Bob is 42.5 years and 7, 1.5; {"a":1} [ 1 ] % |%x`},
		{"directives without arguments stay", `"%s and %d"`, `%s and %d`},
		{"extra arguments after directives", `"%s:", "a", {b: 2}, "c"`, `a: { b: 2 } c`},
		{"%j on a cycle", `"%j", (() => { const o = {}; o.o = o; return o })()`, `[Circular]`},
		{"tools object", `tools`, `{ t: [Function: t] }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runJS(t, `console.log(`+tt.args+`)`, newFakeHost("t"))
			if res.Err != nil {
				t.Fatalf("run failed: %v", res.Err)
			}
			if len(res.Logs) != 1 || res.Logs[0] != tt.want {
				t.Fatalf("logs = %q\nwant  %q", res.Logs, tt.want)
			}
		})
	}
}

func TestConsoleMethodsAndOrder(t *testing.T) {
	host := newFakeHost("t")
	host.handle = func(c Call, settle func(Settlement)) { go settle(Settlement{Value: []byte(`{"n":1}`)}) }
	res := runJS(t, `
		console.log("one");
		const v = await tools.t();
		console.info("two", v.n);
		await new Promise(r => setTimeout(r, 1));
		console.warn("three");
		await null;
		console.error("four");
		console.debug("five");`, host)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := []string{"one", "two 1", "three", "four", "five"}
	if fmt.Sprint(res.Logs) != fmt.Sprint(want) {
		t.Fatalf("logs = %q, want %q", res.Logs, want)
	}
}

func TestConsoleThrowingValue(t *testing.T) {
	// Inspecting runs getters, as JSON.stringify would; one that throws makes console.log throw.
	res := runJS(t, `try { console.log({get x() { throw new Error("getter") }}) } catch (e) { return e.message }`, nil)
	wantValue(t, res, `"getter"`)
}

func TestLogLimit(t *testing.T) {
	t.Run("long line is cut", func(t *testing.T) {
		res := runLang(t, `console.log("12345"); console.log("x".repeat(100)); console.log("never")`, JavaScript, nil, Options{MaxLogBytes: 20})
		wantFailure(t, res, KindLimit, "logged more than 20 bytes")
		if len(res.Logs) != 3 || res.Logs[0] != "12345" || res.Logs[1] != strings.Repeat("x", 13) || !strings.Contains(res.Logs[2], "truncated") {
			t.Fatalf("logs = %q", res.Logs)
		}
	})
	t.Run("empty lines count", func(t *testing.T) {
		res := runLang(t, `for (;;) console.log()`, JavaScript, nil, Options{MaxLogBytes: 100})
		wantFailure(t, res, KindLimit)
		if len(res.Logs) != 101 {
			t.Fatalf("%d lines captured, want 100 empty lines and the marker", len(res.Logs))
		}
	})
	t.Run("cannot be caught", func(t *testing.T) {
		res := runLang(t, `for (let i = 0; i < 1000; i++) { try { console.log("line " + i) } catch (e) {} } return "went on"`, JavaScript, nil, Options{MaxLogBytes: 50})
		wantFailure(t, res, KindLimit)
	})
	t.Run("multibyte characters are not split", func(t *testing.T) {
		res := runLang(t, `console.log("ééééé")`, JavaScript, nil, Options{MaxLogBytes: 6})
		wantFailure(t, res, KindLimit)
		if res.Logs[0] != "éé" {
			t.Fatalf("first line = %q", res.Logs[0])
		}
	})
}

func TestTruncateUTF8(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"hello", 0, ""},
		{"héllo", 2, "h"},
		{"héllo", 3, "hé"},
		{"😀x", 3, ""},
	}
	for _, tt := range tests {
		if got := truncateUTF8(tt.s, tt.n); got != tt.want {
			t.Errorf("truncateUTF8(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
