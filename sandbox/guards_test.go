package sandbox

import (
	"context"
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
	tests := []struct {
		name, src string
		message   string // a limit failure containing this, or "" for success
		value     string
	}{
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
		{name: "Array.from a huge array-like", src: `return Array.from({length: 1e9})`, message: "new Array"},
		{name: "Array identity", src: `return [[].constructor === Array, Array.isArray([]), [] instanceof Array, Array.name, Array.prototype.constructor === Array]`, value: `[true,true,true,"Array",true]`},
		{name: "species creation", src: `const a = Array.from([1]); a.length = 1e8; a.map(x => x)`, message: "new Array"},
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

func TestGuardsForSource(t *testing.T) {
	tests := []struct {
		src  string
		want guardSet
	}{
		{`return 1`, 0},
		{`return Array.isArray(x) && x.map(f)`, 0},
		{`return "a".repeat(2)`, guardRepeat},
		{`return s.padStart(2) + s.padEnd(3)`, guardPadStart | guardPadEnd},
		{`return xs.join(", ")`, guardJoin},
		{`return new Array(n).fill(0)`, guardArray | guardFill},
		{`return Array.from(xs)`, guardArray},
		{`class L extends Array {}`, guardArray},
		{`return JSON.stringify(x)`, guardJSONParse},
		{`return new Uint8Array(4)`, guardTypedArrays << 1},
		{`return new ArrayBuffer(4)`, guardArrayBuffer},
		{`return eval("1")`, guardAll},
		{`return new Function("return 1")()`, guardAll},
		{`const AF = (async () => {}).constructor; return AF`, 0},
	}
	for _, tt := range tests {
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
	res := runSmall(t, `eval(""); const n = "Uint8" + "Array"; new globalThis[n](2 ** 40)`)
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
