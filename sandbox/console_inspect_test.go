package sandbox

import (
	"strings"
	"testing"
)

// TestConsoleInspectIsNode24s pins util.inspect's rendering of the values models log, as
// Node 24 prints them (recorded with util.format), with one difference: an error's stack
// frames are not shown (they would be the sandbox's), so an error inside a value renders as
// Node renders one without frames, [Error: boom] { code: 'E1' }.
func TestConsoleInspectIsNode24s(t *testing.T) {
	tests := []struct{ name, args, want string }{
		{"map entries", "new Map([['a', 1], ['b', {x: 1}]]).entries()", "[Map Entries] { [ 'a', 1 ], [ 'b', { x: 1 } ] }"},
		{"map keys", "new Map([['a', 1], ['b', 2]]).keys()", "[Map Iterator] { 'a', 'b' }"},
		{"map values", "new Map([['a', [1, 2]]]).values()", "[Map Iterator] { [ 1, 2 ] }"},
		{"map iterator", "new Map([['a', 1]])[Symbol.iterator]()", "[Map Entries] { [ 'a', 1 ] }"},
		{"set values", "new Set([1, 2]).values()", "[Set Iterator] { 1, 2 }"},
		{"set entries", "new Set(['x']).entries()", "[Set Entries] { [ 'x', 'x' ] }"},
		{"empty map iterator", "new Map().entries()", "[Map Entries] {  }"},
		{"iterator in an object", "{it: new Set([1]).values(), m: [new Map([[1, 2]]).keys()]}", "{ it: [Set Iterator] { 1 }, m: [ [Map Iterator] { 1 } ] }"},
		{"array iterator", "[1, 2][Symbol.iterator]()", "Object [Array Iterator] {}"},
		{"generator object", "(function* () { yield 1 })()", "Object [Generator] {}"},
		{"getters and setters", "{get a() { return 1 }, set b(v) {}, get c() { return 1 }, set c(v) {}, d: 4}", "{ a: [Getter], b: [Setter], c: [Getter/Setter], d: 4 }"},
		{"symbol keys", "{[Symbol('k')]: 1, a: 2, [Symbol()]: 3}", "{ a: 2, Symbol(k): 1, Symbol(): 3 }"},
		{"array extra properties", "Object.assign([1, 2], {extra: 'x', [Symbol('s')]: 1})", "[ 1, 2, extra: 'x', Symbol(s): 1 ]"},
		{"array extras in columns", "Object.assign(Array.from({length: 8}, (_, i) => i), {x: 1})", "[\n  0,    1, 2, 3,\n  4,    5, 6, 7,\n  x: 1\n]"},
		{"circular object", "(() => { const o = {name: 'o'}; o.self = o; o.list = [o]; return o })()", "<ref *1> { name: 'o', self: [Circular *1], list: [ [Circular *1] ] }"},
		{"circular array", "(() => { const a = [1]; a.push(a); return a })()", "<ref *1> [ 1, [Circular *1] ]"},
		{"two cycles", "(() => { const o = {}; o.a = {b: o}; o.c = {d: {e: o.a}}; return o })()", "<ref *1> { a: { b: [Circular *1] }, c: { d: { e: [Object] } } }"},
		{"classes", "class X {}, class Y extends Map {}, class {}", "[class X] [class Y extends Map] [class (anonymous)]"},
		{"class with static", "Object.assign(class A {}, {s: 1})", "[class A] { s: 1 }"},
		{"function kinds", "async function f() {}, function* g() {}, function () {}, () => {}", "[AsyncFunction: f] [GeneratorFunction: g] [Function (anonymous)] [Function (anonymous)]"},
		{"function properties", "Object.assign(function h() {}, {a: 1, b: [1, 2]})", "[Function: h] { a: 1, b: [ 1, 2 ] }"},
		{"bound and built-in", "function f() {}.bind(null), Math.max", "[Function: bound f] [Function: max]"},
		{"boxed primitives", "new Number(3), new String('ab'), new Boolean(false), Object(Symbol('q')), Object(10n)", "[Number: 3] [String: 'ab'] [Boolean: false] [Symbol: Symbol(q)] [BigInt: 10n]"},
		{"boxed with a key", "Object.assign(new Number(-0), {x: 1})", "[Number: -0] { x: 1 }"},
		{"typed arrays", "new Uint8Array([1, 2, 3]), new Float64Array(2), new BigInt64Array(1), new Int16Array([-1, 300]), new Uint8Array(0)", "Uint8Array(3) [ 1, 2, 3 ] Float64Array(2) [ 0, 0 ] BigInt64Array(1) [ 0n ] Int16Array(2) [ -1, 300 ] Uint8Array(0) []"},
		{"long typed array", "new Uint8Array(120)", "Uint8Array(120) [\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0,\n  ... 20 more items\n]"},
		{"array buffer", "new Uint8Array([1, 2, 255]).buffer, new ArrayBuffer(0)", "ArrayBuffer { [Uint8Contents]: <01 02 ff>, [byteLength]: 3 } ArrayBuffer { [Uint8Contents]: <>, [byteLength]: 0 }"},
		{"data view", "new DataView(new ArrayBuffer(4), 1, 2)", "DataView {\n  [byteLength]: 2,\n  [byteOffset]: 1,\n  [buffer]: ArrayBuffer { [Uint8Contents]: <00 00 00 00>, [byteLength]: 4 }\n}"},
		{"weak collections", "new WeakMap(), new WeakSet()", "WeakMap { <items unknown> } WeakSet { <items unknown> }"},
		{"toStringTag", "{[Symbol.toStringTag]: 'Foo'}, new (class Foo { get [Symbol.toStringTag]() { return 'bar' } })(), Object.defineProperty({a: 1}, Symbol.toStringTag, {value: 'T'})", "{ Symbol(Symbol.toStringTag): 'Foo' } Foo [bar] {} Object [T] { a: 1 }"},
		{"null prototype", "Object.create(null), Object.assign(Object.create(null), {a: 1})", "[Object: null prototype] {} [Object: null prototype] { a: 1 }"},
		{"error with properties", "{e: Object.assign(new Error('boom'), {code: 'E1'})}", "{ e: [Error: boom] { code: 'E1' } }"},
		{"error cause", "[new Error('x', {cause: 'y'})]", "[ [Error: x] { [cause]: 'y' } ]"},
		{"arguments", "(function () { return arguments })(1, 2)", "[Arguments] { '0': 1, '1': 2 }"},
		{"proxy shows its target", "new Proxy({a: 1}, {get() { throw new Error('trap') }}), new Proxy([1], {})", "{ a: 1 } [ 1 ]"},
		{"class instance without keys", "new (class A { get g() { return 1 } })()", "A {}"},
		{"subclassed map", "new (class M extends Map {})([[1, 2]])", "M(1) [Map] { 1 => 2 }"},
		{"promise with a key", "Object.assign(Promise.resolve(1), {x: 2})", "Promise { 1, x: 2 }"},
		{"date and regexp with keys", "Object.assign(new Date(0), {a: 1}), Object.assign(/x/g, {b: 1})", "1970-01-01T00:00:00.000Z { a: 1 } /x/g { b: 1 }"},
		{"quoted keys", "{'$a': 1, _b: 2, 'a-b': 3, 1: 4}", "{ '1': 4, '$a': 1, _b: 2, 'a-b': 3 }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runJS(t, "console.log("+tt.args+")", nil)
			if res.Err != nil {
				t.Fatalf("run failed: %v", res.Err)
			}
			if got := strings.Join(res.Logs, "\n"); got != tt.want {
				t.Fatalf("console.log(%s):\n%s\nwant:\n%s", tt.args, got, tt.want)
			}
		})
	}
}

// TestConsoleIteratorPreviewKeepsValues: showing a Map or Set iterator does not take its
// values from the program.
func TestConsoleIteratorPreviewKeepsValues(t *testing.T) {
	res := runJS(t, `
		const m = new Map([["a", 1], ["b", 2], ["c", 3]])
		const it = m.keys()
		const first = it.next().value
		console.log(it)
		console.log(it)
		const rest = [...it]
		const s = new Set([1, 2]).values()
		console.log(s)
		return [first, rest, s.next(), s.next(), s.next(), Object.keys(it)]`, nil)
	wantValue(t, res, `["a", ["b", "c"], {"value": 1, "done": false}, {"value": 2, "done": false}, {"done": true}, []]`)
	want := "[Map Iterator] { 'b', 'c' }\n[Map Iterator] { 'b', 'c' }\n[Set Iterator] { 1, 2 }"
	if got := strings.Join(res.Logs, "\n"); got != want {
		t.Fatalf("logs:\n%s\nwant:\n%s", got, want)
	}
}
