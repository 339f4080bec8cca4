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
		{"circular", `(() => { const o = {x: 1}; o.self = o; return o })()`, `<ref *1> { x: 1, self: [Circular *1] }`},
		{"functions", `function named() {}, () => 1, class K {}`, `[Function: named] [Function (anonymous)] [class K]`},
		{"holes", `[1, , , 4]`, `[ 1, <2 empty items>, 4 ]`},
		{"long array in columns, as Node lays it out", `Array.from({length: 105}, (_, i) => i)`, "[\n   0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11,\n  12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,\n  24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n  36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,\n  48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,\n  60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n  72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83,\n  84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,\n  96, 97, 98, 99,\n  ... 5 more items\n]"},
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
		{"a proxy shows its target, running no trap", `new Proxy({a: 1}, {get() { throw new Error("trap") }})`, `{ a: 1 }`},
		{"format directives", `"%s is %d years and %i, %f; %j %o %% %c|%x", "Bob", 42.5, 7.9, "1.5", {a: 1}, [1], "color: red"`, `Bob is 42.5 years and 7, 1.5; {"a":1} [ 1 ] % |%x`},
		{"directives without arguments stay", `"%s and %d"`, `%s and %d`},
		{"extra arguments after directives", `"%s:", "a", {b: 2}, "c"`, `a: { b: 2 } c`},
		{"%j on a cycle", `"%j", (() => { const o = {}; o.o = o; return o })()`, `[Circular]`},
		{"tools object", `tools`, `Object [Tools] { t: [Function: t] }`},
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

func TestConsoleAccessorsAreNotCalled(t *testing.T) {
	// As Node: an accessor is shown as [Getter], and never called, so one that throws does not
	// make console.log throw.
	res := runJS(t, `let calls = 0; console.log({get x() { calls++; throw new Error("getter") }}); return calls`, nil)
	wantValue(t, res, `0`)
	if len(res.Logs) != 1 || res.Logs[0] != "{ x: [Getter] }" {
		t.Fatalf("logs = %q", res.Logs)
	}
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

// Objects and arrays are laid out as Node's util.inspect lays them out (line breaks at 80
// columns, nesting of three levels, columns for long arrays of short entries); expected
// text recorded from Node 20.
func TestConsoleLayoutIsNodes(t *testing.T) {
	tests := []struct{ args, want string }{
		{"{a: {b: {c: {d: 1}}}, arr: [1,2,3], s: \"x\".repeat(100), long: Array.from({length: 30}, (_, i) => i)}", "{\n  a: { b: { c: [Object] } },\n  arr: [ 1, 2, 3 ],\n  s: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',\n  long: [\n     0,  1,  2,  3,  4,  5,  6,  7,  8,\n     9, 10, 11, 12, 13, 14, 15, 16, 17,\n    18, 19, 20, 21, 22, 23, 24, 25, 26,\n    27, 28, 29\n  ]\n}"},
		{"Array.from({length: 30}, (_, i) => i * 37)", "[\n    0,  37,  74, 111,  148,  185,\n  222, 259, 296, 333,  370,  407,\n  444, 481, 518, 555,  592,  629,\n  666, 703, 740, 777,  814,  851,\n  888, 925, 962, 999, 1036, 1073\n]"},
		{"[\"apple\", \"banana\", \"cherry\", \"dates\", \"elder\", \"figs\", \"grape\", \"honeydew\"]", "[\n  'apple',  'banana',\n  'cherry', 'dates',\n  'elder',  'figs',\n  'grape',  'honeydew'\n]"},
		{"{name: \"Ada Lovelace\", email: \"ada@example.com\", roles: [\"admin\", \"author\"], active: true, id: 12345}", "{\n  name: 'Ada Lovelace',\n  email: 'ada@example.com',\n  roles: [ 'admin', 'author' ],\n  active: true,\n  id: 12345\n}"},
		{"new Map([[\"alpha\", {x: 1, y: [1, 2, 3]}], [\"beta\", {x: 2, y: [4, 5, 6]}], [\"gamma\", {x: 3, y: \"a long string value here\"}]])", "Map(3) {\n  'alpha' => { x: 1, y: [ 1, 2, 3 ] },\n  'beta' => { x: 2, y: [ 4, 5, 6 ] },\n  'gamma' => { x: 3, y: 'a long string value here' }\n}"},
		{"{rows: Array.from({length: 5}, (_, i) => ({id: i, label: \"row \" + i, tags: [\"t\" + i]}))}", "{\n  rows: [\n    { id: 0, label: 'row 0', tags: [Array] },\n    { id: 1, label: 'row 1', tags: [Array] },\n    { id: 2, label: 'row 2', tags: [Array] },\n    { id: 3, label: 'row 3', tags: [Array] },\n    { id: 4, label: 'row 4', tags: [Array] }\n  ]\n}"},
		{"[[1, 2, [3, 4, [5, 6]]], {x: {y: {z: {w: 1}}}}]", "[ [ 1, 2, [ 3, 4, [Array] ] ], { x: { y: [Object] } } ]"},
		{"new Set([\"a\".repeat(30), \"b\".repeat(30), \"c\".repeat(30)])", "Set(3) {\n  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',\n  'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb',\n  'cccccccccccccccccccccccccccccc'\n}"},
		{"[1, , , 4, 5, 6, 7, 8]", "[ 1, <2 empty items>, 4, 5, 6, 7, 8 ]"},
		{"{\"key with space\": 1, nested: {\"\u00e9\": \"\u00fc\", list: Array.from({length: 8}, (_, i) => \"item\" + i)}}", "{\n  'key with space': 1,\n  nested: {\n    '\u00e9': '\u00fc',\n    list: [\n      'item0', 'item1',\n      'item2', 'item3',\n      'item4', 'item5',\n      'item6', 'item7'\n    ]\n  }\n}"},
	}
	for _, tt := range tests {
		res := runJS(t, "console.log("+tt.args+")", nil)
		if res.Err != nil || len(res.Logs) != 1 || res.Logs[0] != tt.want {
			t.Errorf("console.log(%s):\n%s\nwant:\n%s (err %v)", tt.args, strings.Join(res.Logs, "\n"), tt.want, res.Err)
		}
	}
}
