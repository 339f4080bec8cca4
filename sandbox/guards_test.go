package sandbox

import (
	"context"
	"fmt"
	"testing"
)

// smallMemory makes the caps small enough to test cheaply: strings of 64 Ki characters,
// arrays of 32 Ki elements, buffers of 256 KiB.
const smallMemory = 1 << 20

func runSmall(t *testing.T, src string) Result {
	t.Helper()
	return runLang(t, src, JavaScript, nil, Options{Memory: smallMemory})
}

func TestGuardsCapBuiltins(t *testing.T) {
	tests := []guardTest{
		{name: "repeat under the cap", src: `return "ab".repeat(3)`, value: `"ababab"`},
		{name: "repeat at the cap", src: `return "x".repeat(65536).length`, value: `65536`},
		{name: "repeat over the cap", src: `return "x".repeat(65537)`, message: "String.prototype.repeat would build a string of 65537 characters; the limit is 65536 characters (1/16 of the run's 1 MiB memory limit)"},
		{name: "repeat of a long string", src: `return "xy".repeat(40000)`, message: "of 80000 characters"},
		{name: "repeat 2**40", src: `return "x".repeat(2 ** 40)`, message: "String.prototype.repeat"},
		{name: "repeat keeps its RangeError", src: `try { "x".repeat(-1) } catch (e) { return e.name }`, value: `"RangeError"`},
		{name: "repeat on an object", src: `return String.prototype.repeat.call({toString() { return "o" }}, 2)`, value: `"oo"`},
		{name: "repeat on null", src: `try { String.prototype.repeat.call(null, 2) } catch (e) { return e.name }`, value: `"TypeError"`},
		{name: "padStart under the cap", src: `return "5".padStart(3, "0")`, value: `"005"`},
		{name: "padStart over the cap", src: `return "5".padStart(1e6)`, message: "String.prototype.padStart would build a string of 1000000 characters"},
		{name: "padEnd over the cap", src: `return "5".padEnd(2 ** 40, "ab")`, message: "String.prototype.padEnd"},
		{name: "padEnd with an empty filler builds nothing", src: `return "5".padEnd(2 ** 40, "").length`, value: `1`},
		{name: "join of an object without length", src: `return Array.prototype.join.call({})`, value: `""`},
		{name: "typed array of an object without length", src: `return new Uint8Array({}).length`, value: `0`},
		{name: "join under the cap", src: `return [1, "a", null].join("-")`, value: `"1-a-"`},
		{name: "join of a huge sparse array", src: `const a = []; a.length = 1e8; return a.join()`, message: "Array.prototype.join would walk an array of 100000000 elements; the limit is 32768 elements"},
		{name: "join with a huge separator", src: `return [1, 2, 3].join("x".repeat(40000))`, message: "Array.prototype.join would build a string of 80000 characters"},
		{name: "fill under the cap", src: `return new Array(3).fill(7)`, value: `[7,7,7]`},
		{name: "fill with a range", src: `return [1, 2, 3, 4].fill(0, 1, -1)`, value: `[1,0,0,4]`},
		{name: "fill of a huge sparse array", src: `const a = []; a.length = 2 ** 32 - 1; a.fill(0)`, message: "Array.prototype.fill would fill 4294967295 elements"},
		{name: "Array(n) under the cap", src: `return Array(3).length + new Array(2).length`, value: `5`},
		{name: "Array(n) over the cap", src: `return Array(1e8)`, message: "new Array would make an array of 100000000 elements"},
		{name: "new Array(n) over the cap", src: `return new Array(2 ** 32 - 1).sort()`, message: "new Array"},
		{name: "Array with an invalid length keeps its RangeError", src: `try { new Array(-1) } catch (e) { return e.name }`, value: `"RangeError"`},
		{name: "Array of one non-number", src: `return new Array("7")`, value: `["7"]`},
		{name: "Array.from an array-like", src: `return Array.from({length: 2}, (_, i) => i)`, value: `[0,1]`},
		{name: "Array.from a huge array-like", src: `return Array.from({length: 1e9})`, message: "Array.from would make an array of 1000000000 elements"},
		{name: "Array identity", src: `return [[].constructor === Array, Array.isArray([]), [] instanceof Array, Array.name, Array.prototype.constructor === Array]`, value: `[true,true,true,"Array",true]`},
		{name: "species creation", src: `const a = Array.from([1]); a.length = 1e8; a.map(x => x)`, message: "Array.prototype.map would walk an array of 100000000 elements"},
		{name: "species creation of a subclass", src: `class A extends Array {}; const a = new A(1); a.length = 1e8; Array.prototype.slice.call(a, 0, 1)`, message: "Array.prototype.slice would walk"},
		{name: "constructor of an array", src: `Array.of(1); return [].constructor(1e9)`, message: "new Array"},
		{name: "Array subclass", src: `class A extends Array {}; const a = new A(3); return [a.length, a instanceof A, a.map(x => x) instanceof A]`, value: `[3,true,true]`},
		{name: "ArrayBuffer under the cap", src: `return new ArrayBuffer(8).byteLength`, value: `8`},
		{name: "ArrayBuffer over the cap", src: `new ArrayBuffer(2 ** 40)`, message: "new ArrayBuffer would allocate 1099511627776 bytes; the limit is 262144 bytes"},
		{name: "ArrayBuffer through an instance", src: `const B = new ArrayBuffer(1).constructor; new B(2 ** 31)`, message: "new ArrayBuffer"},
		{name: "typed array under the cap", src: `return [new Uint8Array(4).length, new Float64Array([1, 2])[1], Uint8Array.from([3])[0], new Uint8Array(new ArrayBuffer(8), 2).length]`, value: `[4,2,3,6]`},
		{name: "typed array over the cap", src: `new Float64Array(40000)`, message: "new Float64Array would allocate 320000 bytes"},
		{name: "typed array of 2**40", src: `new Uint8Array(2 ** 40)`, message: "new Uint8Array"},
		{name: "typed array from a huge array-like", src: `new Int32Array({length: 2 ** 40})`, message: "new Int32Array"},
		{name: "typed array through its constructor property", src: `const C = new Uint16Array(1).constructor; new C(2 ** 30)`, message: "new Uint16Array"},
		{name: "typed array from()", src: `Uint8Array.from({length: 2 ** 40})`, message: "new Uint8Array"},
		{name: "typed array identity", src: `const u = new Uint8Array(1); return [u.constructor === Uint8Array, u instanceof Uint8Array, Uint8Array.BYTES_PER_ELEMENT]`, value: `[true,true,1]`},
		{name: "JSON.parse under the cap", src: `return JSON.parse('{"a":[1,[2]]}', (k, v) => v)`, value: `{"a":[1,[2]]}`},
		{name: "JSON.parse of deep text", src: `return JSON.parse("[".repeat(10001) + "]".repeat(10001))`, message: "JSON.parse was given text that nests deeper than 10000 levels"},
		{name: "JSON.parse keeps its SyntaxError", src: `try { JSON.parse("{") } catch (e) { return e.name }`, value: `"SyntaxError"`},
		{name: "guard failures cannot be caught", src: `try { "x".repeat(1e6) } catch (e) { return "caught" } finally { return "finally" }`, message: "String.prototype.repeat"},
		{name: "guard failures end pending work", src: `setTimeout(() => {}, 0); await null; "x".repeat(1e6); return 1`, message: "String.prototype.repeat"},
		{name: "arguments are converted once", src: `let n = 0; const c = {valueOf() { n++; return 2 }}; "x".repeat(c); "x".padStart(c); [1].fill(0, c, c); new ArrayBuffer(c); new Uint8Array(c); return n`, value: `5`},
		{name: "guarded functions look native", src: `return [String(String.prototype.repeat), "x".repeat.length, [].join.name, "".padStart.length]`, value: `["function repeat() { [native code] }",1,"join",2]`},
	}
	runGuardTests(t, tests)
}

type guardTest struct {
	name, src string
	message   string // a limit failure containing this, or "" for success
	value     string
}

func runGuardTests(t *testing.T, tests []guardTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runSmall(t, tt.src)
			if tt.message != "" {
				wantFailure(t, res, KindLimit, tt.message)
				return
			}
			wantValue(t, res, tt.value)
		})
	}
}

// TestGuardsCapWalks: every built-in that walks an array-like to its length in native code,
// or builds a list of all of it, fails the run at the cap before it starts (each of these
// would otherwise loop for days, or ask for gigabytes, in one step); under the cap each works
// as without its guard, and a length that lies (a getter, a proxy) is read once.
func TestGuardsCapWalks(t *testing.T) {
	huge := "{length: 2 ** 53 - 1}"
	var tests []guardTest
	for _, m := range []string{"every", "some", "forEach", "map", "filter", "reduce", "reduceRight", "find", "findIndex",
		"findLast", "findLastIndex", "includes", "indexOf", "lastIndexOf", "reverse", "toReversed", "shift", "unshift",
		"splice", "toSpliced", "copyWithin", "sort", "toSorted", "toLocaleString", "with", "slice", "keys", "values",
		"entries", "flat", "flatMap", "join", "fill"} {
		args := ""
		switch m {
		case "every", "some", "forEach", "map", "filter", "find", "findIndex", "findLast", "findLastIndex", "flatMap":
			args = "x => x"
		case "reduce", "reduceRight":
			args = "(a, b) => a, 0"
		case "with":
			args = "0, 1"
		case "fill":
			args = "0, 0, 2 ** 40"
		}
		tests = append(tests, guardTest{name: m + " of a huge array-like", src: fmt.Sprintf("return Array.prototype.%s.call(%s, %s)", m, huge, args),
			message: "Array.prototype." + m + " would"})
	}
	tests = append(tests, []guardTest{
		{name: "includes of a sparse array", src: `const a = []; a[2 ** 32 - 2] = 1; return a.includes(0)`, message: "Array.prototype.includes would walk an array of 4294967295 elements; the limit is 32768 elements (1/32 of the run's 1 MiB memory limit)"},
		{name: "forEach of a long array", src: `const a = []; a.length = 1e6; a.forEach(() => {})`, message: "Array.prototype.forEach would walk an array of 1000000 elements"},
		{name: "toSorted of 2**32-2", src: `return Array.prototype.toSorted.call({length: 2 ** 32 - 2})`, message: "Array.prototype.toSorted would walk an array-like of 4294967294 elements"},
		{name: "a length getter is read once", src: `let n = 0; const o = {get length() { n++; return n > 1 ? 2 ** 53 - 1 : 2 }, 0: "a", 1: "b"}; return [Array.prototype.includes.call(o, "b"), n]`, value: `[true,1]`},
		{name: "a proxy's length is read once", src: `let n = 0; const p = new Proxy([1, 2], {get(t, k) { if (k === "length") return n++ ? 2 ** 53 - 1 : 2; return t[k] }}); return [Array.prototype.map.call(p, x => x * 2), n]`, value: `[[2,4],1]`},
		{name: "spread of a sparse array", src: `const a = []; a[2 ** 32 - 2] = 0; return [...a].length`, message: "Array.prototype.values would walk an array of 4294967295 elements"},
		{name: "spread into a call", src: `const a = []; a[2 ** 32 - 2] = 0; return Math.max(...a)`, message: "Array.prototype.values would walk"},
		{name: "a set of a sparse array", src: `const a = []; a[2 ** 32 - 2] = 0; return new Set(a).size`, message: "Array.prototype.values would walk"},
		{name: "Promise.all of a sparse array", src: `const a = []; a[2 ** 32 - 2] = 0; return (await Promise.all(a)).length`, message: "Array.prototype.values would walk"},
		{name: "an iterable array-like", src: `const o = {length: 2 ** 40, [Symbol.iterator]: Array.prototype[Symbol.iterator]}; return [...o].length`, message: "Array.prototype.values would walk an array-like of 1099511627776 elements"},
		{name: "an iterable array-like that grows", src: `let n = 0; const o = {get length() { return ++n }, [Symbol.iterator]: Array.prototype.values}; return [...o].length`, value: `1`},
		{name: "under the cap", src: `const o = {length: 3, 0: "a", 2: "c"}; return [Array.prototype.includes.call(o, "c"), [3, 1, 2].toSorted(), [1, 2, 3].with(1, 9), Array.prototype.map.call("ab", c => c + c), Array.prototype.slice.call(o).join(), [1, 2, 3].toReversed(), [1, 2, 3].toSpliced(1, 1), [...[1, 2]], Array.from(new Set([1, 1, 2])), [1, 2, 3].findLast(x => x < 3), [..."ab"]]`,
			value: `[true,[1,2,3],[1,9,3],["aa","bb"],"a,,c",[3,2,1],[1,3],[1,2],[1,2],2,["a","b"]]`},
		{name: "iterator identity", src: `return [[][Symbol.iterator] === [].values, [].values.name, [].keys.length, Array.prototype[Symbol.iterator] === Array.prototype.values]`, value: `[true,"values",0,true]`},
		{name: "apply of 2**32-1", src: `return Math.max.apply(null, {length: 2 ** 32 - 1})`, message: "Function.prototype.apply would walk an array-like of 4294967295 elements"},
		{name: "fromCharCode through apply", src: `return String.fromCharCode.apply(null, {length: 40000}).length`, message: "Function.prototype.apply would walk an array-like of 40000 elements"},
		{name: "push through apply", src: `const a = []; a.length = 1e6; [].push.apply([], a)`, message: "Function.prototype.apply would walk an array of 1000000 elements"},
		{name: "Reflect.apply", src: `return Reflect.apply(String.fromCharCode, null, {length: 2 ** 31})`, message: "Reflect.apply would walk an array-like of 2147483648 elements"},
		{name: "Reflect.construct", src: `return Reflect.construct(Date, {length: 1e9})`, message: "Reflect.construct would walk an array-like of 1000000000 elements"},
		{name: "apply under the cap", src: `return [Math.max.apply(null, [1, 5, 3]), Math.max.apply(null, {length: 2, 0: 1, 1: 7}), Reflect.apply(Math.min, null, [4, 2]), Reflect.construct(Date, [0]).getTime(), String.fromCharCode.apply(null, [104, 105]), String(Math.max.apply(null))]`, value: `[5,7,2,0,"hi","-Infinity"]`},
		{name: "apply with a length getter", src: `let n = 0; const r = Math.max.apply(null, {get length() { return n++ ? 2 ** 32 - 1 : 3 }}); return [String(r), n]`, value: `["NaN",1]`},
		{name: "Array.from a string", src: `return Array.from("x".repeat(40000)).length`, message: "Array.from would make an array of 40000 elements"},
		{name: "Array.from a typed array", src: `return Array.from(new Uint8Array(3000)).length`, value: `3000`},
		{name: "Array.from on another constructor", src: `return Array.from.call(Object, {length: 2 ** 32})`, message: "Array.from would make an array of 4294967296 elements"},
		{name: "concat of a spreadable array-like", src: `return [].concat({length: 1e9, [Symbol.isConcatSpreadable]: true}).length`, message: "Array.prototype.concat would make an array of 1000000000 elements"},
		{name: "concat of long arrays", src: `const a = []; a.length = 20000; return a.concat(a).length`, message: "Array.prototype.concat would make an array of 40000 elements"},
		{name: "concat under the cap", src: `return [[1].concat([2], 3, {length: 2 ** 40}).length, [1].concat([2], 3).slice(0, 3), [].concat({length: 2, 0: "a", [Symbol.isConcatSpreadable]: true}).join()]`, value: `[4,[1,2,3],"a,"]`},
		{name: "flat of an array that contains itself", src: `const a = [1]; a.push(a); return a.flat(Infinity)`, message: "Array.prototype.flat would flatten arrays nested deeper than 10000 levels"},
		{name: "flat of a doubling array", src: `let a = [1]; for (let i = 0; i < 30; i++) a = [a, a]; return a.flat(30).length`, message: "Array.prototype.flat would visit more than 32768 elements"},
		{name: "flat of a nested long array", src: `const b = []; b.length = 1e6; return [[b]].flat(2).length`, message: "Array.prototype.flat would visit more than"},
		{name: "flatMap returning long arrays", src: `return [1, 2].flatMap(() => { const a = []; a.length = 1e6; return a }).length`, message: "Array.prototype.flatMap would visit more than 32768 elements"},
		{name: "flat under the cap", src: `return [[1, [2, [3, [4]]]].flat(Infinity), [[1], [2]].flat(), [1, 2].flatMap(x => [x, x * 10]), [1].flatMap(function () { return [this.v] }, {v: 7})]`, value: `[[1,2,3,4],[1,2],[1,10,2,20],[7]]`},
	}...)
	runGuardTests(t, tests)
}

// TestGuardsCapStrings: the built-ins that build a string or a list from their arguments size
// it first (or count it as they go) and fail the run at the cap.
func TestGuardsCapStrings(t *testing.T) {
	runGuardTests(t, []guardTest{
		{name: "join of long strings", src: `const s = "x".repeat(30000); return [s, s, s].join("")`, message: "Array.prototype.join would build a string of more than 65536 characters"},
		{name: "join of nested arrays", src: `const s = "x".repeat(10000); const inner = [s, s, s]; return [inner, inner, inner].join().length`, message: "Array.prototype.join would build a string of more than 65536"},
		{name: "toString of long strings", src: `const s = "x".repeat(30000); return String([s, s, s]).length`, message: "Array.prototype.join would build"},
		{name: "a template of long strings", src: "const s = \"x\".repeat(30000); return `${[s, s, s]}`.length", message: "Array.prototype.join would build"},
		{name: "join under the cap", src: `const a = [1, 2]; a.push(a); return [a.join("-"), [1, [2, [3]], null, undefined, "x"].join(), String([1, 2]), Array.prototype.join.call(new Uint8Array([1, 2])), Array.prototype.join.call({length: 2, 0: "a"}, "+"), [].join(), ["\ud800"].join().length]`,
			value: `["1-2-","1,2,3,,,x","1,2","1,2","a+","",1]`},
		{name: "join of a symbol", src: `try { [Symbol()].join() } catch (e) { return e.name }`, value: `"TypeError"`},
		{name: "join of null", src: `try { Array.prototype.join.call(null) } catch (e) { return e.name }`, value: `"TypeError"`},
		{name: "typed join", src: `return new Uint8Array(30000).join().length`, message: "TypedArray.prototype.join could build a string of 149999 characters"},
		{name: "typed join of doubles", src: `return new Float64Array(3000).join().length`, message: "TypedArray.prototype.join could build"},
		{name: "typed toLocaleString", src: `return new Uint8Array(2000).toLocaleString().length`, message: "TypedArray.prototype.toLocaleString could build"},
		{name: "typed join under the cap", src: `return [new Uint8Array([1, 2, 3]).join("-"), new Float64Array([0.5]).join(), new Int8Array(0).join(), new Uint8Array(2).toLocaleString()]`, value: `["1-2-3","0.5","","0,0"]`},
		{name: "replaceAll", src: `return "a".repeat(1000).replaceAll("a", "b".repeat(100)).length`, message: "String.prototype.replaceAll would build a string of 101000 characters"},
		{name: "replace with a global pattern", src: `return "a".repeat(100).replace(/a/g, "b".repeat(1000)).length`, message: "String.prototype.replace would build a string of"},
		{name: "replace with a function", src: `return "a".repeat(70).replace(/a/g, () => "b".repeat(1000)).length`, message: "String.prototype.replace would build a string of more than 65536"},
		{name: "replace with $`", src: "return \"a\".repeat(1000).replaceAll(\"a\", \"$`\").length", message: "String.prototype.replaceAll would build"},
		{name: "replace under the cap", src: `return ["aXa".replaceAll("a", "bb"), "x".repeat(60000).replace(/y/g, "z".repeat(100)).length, "abc".replace(/b/, m => m.toUpperCase()), "a".repeat(300).replaceAll("a", "$&$&").length, "ab".replace("b", "[$&]"), "aaa".replace("a", "b"), "x".replaceAll("", "-")]`,
			value: `["bbXbb",60000,"aBc",600,"a[b]","baa","-x-"]`},
		{name: "split", src: `return "x".repeat(40000).split("").length`, message: "String.prototype.split would make an array of 40000 elements"},
		{name: "split under the cap", src: `return ["a,b".split(","), "x".repeat(40000).split("", 3), "a1b".split(/\d/), "ab".split(), "a".split(undefined, 0)]`, value: `[["a","b"],["x","x","x"],["a","b"],["ab"],[]]`},
		{name: "concat", src: `const s = "x".repeat(30000); return "".concat(s, s, s).length`, message: "String.prototype.concat would build a string of 90000 characters"},
		{name: "concat under the cap", src: `return "a".concat(1, "b", null)`, value: `"a1bnull"`},
		{name: "String.raw", src: `return String.raw({raw: {length: 2 ** 40}})`, message: "String.raw would walk an array-like of 1099511627776 elements"},
		{name: "String.raw under the cap", src: "return [String.raw`a${1}b`, String.raw({raw: [\"x\", \"y\"]}, 1)]", value: `["a1b","x1y"]`},
		{name: "BigInt.asUintN", src: `return String(BigInt.asUintN(2 ** 40, 1n))`, message: "BigInt.asUintN would compute with a number of 1099511627776 bits"},
		{name: "BigInt.asIntN under the cap", src: `return [String(BigInt.asUintN(8, 257n)), String(BigInt.asIntN(8, 255n))]`, value: `["1","-1"]`},
		{name: "JSON.stringify of a long array", src: `const a = []; a.length = 1e6; return JSON.stringify({a}).length`, message: "JSON.stringify would walk an array of 1000000 elements"},
		{name: "JSON.stringify of long strings", src: `const s = "x".repeat(30000); return JSON.stringify([s, s, s]).length`, message: "JSON.stringify would build a string of more than 65536 characters"},
		{name: "JSON.stringify of many values", src: `const a = new Array(200).fill(0); return JSON.stringify(new Array(200).fill(a)).length`, message: "JSON.stringify would"},
		{name: "JSON.stringify under the cap", src: `return [JSON.stringify({a: [1, "x", null, {b: true}], d: new Date(0), u: undefined}), JSON.stringify({a: 1, b: 2}, (k, v) => k === "b" ? undefined : v), JSON.stringify({a: 1, b: 2}, ["b"]), JSON.stringify([1], null, 2), JSON.stringify({toJSON() { return "t" }}), JSON.stringify(new Array(3000).fill(0)).length, JSON.stringify(undefined) === undefined, JSON.stringify({a: 1}, {})]`,
			value: `["{\"a\":[1,\"x\",null,{\"b\":true}],\"d\":\"1970-01-01T00:00:00.000Z\"}","{\"a\":1}","{\"b\":2}","[\n  1\n]","\"t\"",6001,true,"{\"a\":1}"]`},
		{name: "typed array elements", src: `return new Uint8Array(40000).length`, message: "new Uint8Array would make a typed array of 40000 elements; the limit is 32768 elements"},
		{name: "a typed view of a large buffer", src: `return new Uint8Array(new ArrayBuffer(200000)).length`, message: "new Uint8Array would make a typed array of 200000 elements"},
		{name: "a typed view with a length", src: `return new Uint8Array(new ArrayBuffer(200000), 0, 40000).length`, message: "new Uint8Array would make a typed array of 40000 elements"},
		{name: "typed views under the cap", src: `const b = new ArrayBuffer(200000); return [new Uint8Array(b, 190000).length, new Float64Array(b).length, new Uint8Array(b, 8, 16).length, new Uint16Array(b, 140000).length]`, value: `[10000,25000,16,30000]`},
	})
}

func TestGuardsForSource(t *testing.T) {
	mapBit := guardWalkers << 3
	tests := []struct {
		src  string
		want guardSet
	}{
		{`return 1`, 0},
		{`return Array.isArray(x) && x.map(f)`, mapBit},
		{`return "a".repeat(2)`, guardRepeat},
		{`return s.padStart(2) + s.padEnd(3)`, guardPadStart | guardPadEnd},
		{`return xs.join(", ")`, guardJoin},
		{`return new Array(n).fill(0)`, guardArray | guardFill},
		{`return Array.from(xs)`, guardArray | guardArrayFrom},
		{`class L extends Array {}`, guardArray},
		{`return JSON.stringify(x)`, guardJSON},
		{`return new Uint8Array(4)`, guardTypedArrays << 1},
		{`return new Uint8Array(4).join()`, guardTypedArrays<<1 | guardTypedJoin},
		{`return new ArrayBuffer(4)`, guardArrayBuffer},
		{`return f.apply(null, a) + Reflect.apply(f, null, a)`, guardApply | guardReflect},
		{`return s.replaceAll("a", "b").split(",").concat([])`, guardReplace | guardSplit | guardConcat},
		{`return a.toSorted().flatMap(f)`, guardWalkers<<13 | guardFlat},
		{`return eval("1")`, guardAll},
		{`return new Function("return 1")()`, guardAll},
		{`const AF = (async () => {}).constructor; return AF`, 0},
	}
	if walkers[3].trigger != "map" || walkers[13].trigger != "ort" {
		t.Fatal("the walker indexes of this test moved")
	}
	for _, tt := range tests {
		tt.want |= alwaysGuarded
		if tt.want&guardAll == guardAll {
			tt.want = guardAll
		}
		if got := guardsFor(tt.src); got != tt.want {
			t.Errorf("guardsFor(%q) = %b, want %b", tt.src, got, tt.want)
		}
	}
	if guardAll&(guardTypedArrays<<(len(typedArrays)-1)) == 0 {
		t.Fatal("guardAll misses the last typed array")
	}
}

func TestGuardsAllInstall(t *testing.T) {
	// eval makes every guard install, including ones the source does not name.
	// Installing them all allocates about 1.5 MiB, over smallMemory, which the heap
	// watchdog would charge to the run when a sample falls mid-run (on a busy
	// machine): a larger limit leaves the guard alone to judge.
	res := runLang(t, `eval(""); const n = "Uint8" + "Array"; new globalThis[n](2 ** 40)`, JavaScript, nil, Options{Memory: 64 << 20})
	wantFailure(t, res, KindLimit, "new Uint8Array")
}

func TestInProcessRunner(t *testing.T) {
	host := newFakeHost("t")
	tests := []struct {
		name, src, value, kind string
	}{
		{"javascript", `return (await tools.t({a: 1})).args.a`, `1`, ""},
		{"typescript", `const x: number = (await tools.t({a: 2})).args.a; return x`, `2`, ""},
		{"syntax error", `return (`, "", KindSyntax},
		{"typescript syntax error", `const x: = 1`, "", KindSyntax},
		{"runtime error", `throw new Error("x")`, "", KindRuntime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := InProcess{}.Run(context.Background(), tt.src, host, Options{})
			if tt.kind != "" {
				wantFailure(t, res, tt.kind)
				return
			}
			wantValue(t, res, tt.value)
		})
	}
}
