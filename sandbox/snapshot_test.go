package sandbox

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestArgumentSnapshotAccepts(t *testing.T) {
	tests := []struct{ name, arg, want string }{
		{"plain data", `{a: 1, b: "s", c: [true, false, null], d: {e: 1.5}}`, `{"a":1,"b":"s","c":[true,false,null],"d":{"e":1.5}}`},
		{"negative zero", `{z: -0, n: [-0]}`, `{"z":-0,"n":[-0]}`},
		{"number formatting", `[1e21, 5e-7, 0.1, -3, 2**53]`, `[1e+21,5e-7,0.1,-3,9007199254740992]`},
		{"key order", `{b: 1, a: 2, 10: 3, 2: 4}`, `{"2":4,"10":3,"b":1,"a":2}`},
		{"escapes", `{"q\"k": "line\nbreak\ttab\u0001\\"}`, `{"q\"k":"line\nbreak\ttab\u0001\\"}`},
		{"lone surrogates are escaped, pairs kept", `["\ud800", "a\udc00b", "😀", "\ufffd"]`, `["\ud800","a\udc00b","😀","�"]`},
		{"null prototype", `Object.assign(Object.create(null), {x: 1})`, `{"x":1}`},
		{"proto key", `JSON.parse('{"__proto__": {"x": 1}}')`, `{"__proto__":{"x":1}}`},
		{"getter value", `{get v() { return 2 }}`, `{"v":2}`},
		{"non-enumerable and symbol keys are skipped", `Object.defineProperty({[Symbol("s")]: 1, a: 1}, "hidden", {value: 2})`, `{"a":1}`},
		{"shared non-cyclic references", `(() => { const x = {k: 1}; return {a: x, b: [x, x]} })()`, `{"a":{"k":1},"b":[{"k":1},{"k":1}]}`},
		{"empty containers", `{a: {}, b: []}`, `{"a":{},"b":[]}`},
		{"primitives at the root", `"just a string"`, `"just a string"`},
		// JSON.stringify's rules.
		{"undefined root means no argument", `undefined`, `{}`},
		{"undefined property is left out", `{a: undefined, b: 1}`, `{"b":1}`},
		{"undefined element is null", `[1, undefined]`, `[1,null]`},
		{"hole is null", `[1, , 3]`, `[1,null,3]`},
		{"Date through toJSON", `{when: new Date(0)}`, `{"when":"1970-01-01T00:00:00.000Z"}`},
		{"invalid Date through toJSON", `[new Date(NaN)]`, `[null]`},
		{"toJSON", `{toJSON() { return {x: 1} }}`, `{"x":1}`},
		{"toJSON gets the key", `{a: {toJSON(k) { return "key " + k }}, b: [{toJSON(k) { return k }}]}`, `{"a":"key a","b":["0"]}`},
		{"toJSON returning undefined drops the property", `{a: {toJSON() {}}, b: 2}`, `{"b":2}`},
		{"class instance with toJSON", `new (class P { toJSON() { return "p" } })()`, `"p"`},
		{"boxed primitives are unwrapped", `[new String("s"), new Number(2), new Boolean(false)]`, `["s",2,false]`},
		{"array subclass is an array", `(() => { class L extends Array {}; const l = new L(); l.push(1); return l })()`, `[1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := newFakeHost("t")
			res := runJS(t, `await tools.t(`+tt.arg+`); return "ok"`, host)
			wantValue(t, res, `"ok"`)
			calls := host.recorded()
			if len(calls) != 1 || string(calls[0].Args) != tt.want {
				t.Fatalf("args = %s, want %s", calls[0].Args, tt.want)
			}
			if !json.Valid(calls[0].Args) {
				t.Fatalf("args %s are not valid JSON", calls[0].Args)
			}
		})
	}
}

func TestArgumentSnapshotRejects(t *testing.T) {
	tests := []struct{ name, arg, want string }{
		{"function", `{a: [0, 1, () => 1]}`, "argument at .a[2] is a function: JSON has no functions (call it and pass its value)"},
		{"class", `{k: class {}}`, "argument at .k is a function"},
		{"symbol", `{"odd key": Symbol("s")}`, `argument at ["odd key"] is a symbol`},
		{"bigint", `{n: 10n}`, "argument at .n is a BigInt: JSON has no BigInt (pass String(n), or Number(n) when it fits)"},
		{"NaN", `{n: NaN}`, "argument at .n is NaN: a tool must not receive a silent null"},
		{"Infinity", `[Infinity]`, "argument at [0] is Infinity"},
		{"-Infinity", `{x: {y: -Infinity}}`, "argument at .x.y is -Infinity"},
		{"cycle", `(() => { const o = {a: {}}; o.a.back = o; return o })()`, "argument at .a.back is a circular reference"},
		{"self array", `(() => { const a = []; a.push(a); return a })()`, "argument at [0] is a circular reference"},
		{"length-only array", `(() => { const a = []; a.length = 4294967295; return a })()`, "argument is larger than"},
		{"throwing getter", `{get bad() { throw new Error("nope") }}`, "argument at .bad could not be read: Error: nope"},
		{"throwing toJSON", `{d: {toJSON() { throw new Error("no json") }}}`, "argument at .d could not be read: Error: no json"},
		{"Date without toJSON", `(() => { const d = new Date(0); d.toJSON = undefined; return {when: d} })()`, "argument at .when is a Date: pass date.toISOString()"},
		{"Map", `new Map()`, "argument is a Map: pass Object.fromEntries(map)"},
		{"Set", `{s: new Set([1])}`, "argument at .s is a Set: pass [...set]"},
		{"RegExp", `/x/`, "argument is a RegExp: pass re.source"},
		{"Error", `new Error("e")`, "argument is an Error: pass {name: e.name, message: e.message}"},
		{"Promise", `Promise.resolve(1)`, "argument is a Promise: await it first"},
		{"typed array", `new Uint8Array(2)`, "argument is a Uint8Array: pass Array.from(array)"},
		{"ArrayBuffer", `new ArrayBuffer(2)`, "argument is an ArrayBuffer: pass Array.from(new Uint8Array(buffer))"},
		{"arguments object", `(function () { return arguments })(1)`, "argument is an Arguments: pass Array.from(arguments)"},
		{"class instance", `new (class Point { constructor() { this.x = 1 } })()`, "argument is a Point instance, not a plain object: pass {...obj} (its own fields), or give Point a toJSON() method"},
		{"custom prototype", `Object.create({inherited: 1})`, "argument is an object with a custom prototype"},
		{"anonymous prototype", `Object.create(Object.create(null))`, "argument is an object with a custom prototype"},
		{"proxy", `new Proxy({}, {})`, "argument is a Proxy"},
		{"proxy of array", `{p: new Proxy([], {})}`, "argument at .p is a Proxy"},
		{"revoked proxy", `(() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy })()`, "argument is a Proxy"},
		{"tools itself", `tools`, "argument is an object with a custom prototype"},
		{"too deep", `(() => { let o = {}; for (let i = 0; i < 10001; i++) o = [o]; return o })()`, "argument at [0][0][0][0][0][0][0][0] … 9984 levels … [0][0][0][0][0][0][0][0] nests deeper than 10000 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := newFakeHost("t")
			res := runJS(t, `try { await tools.t(`+tt.arg+`); return "dispatched" } catch (e) { return [e.name, e.toolName, e.message] }`, host)
			if res.Err != nil {
				t.Fatalf("run failed: %v", res.Err)
			}
			var got []string
			if err := json.Unmarshal(res.Value, &got); err != nil || len(got) != 3 {
				t.Fatalf("value = %s", res.Value)
			}
			if got[0] != "ToolCallError" || got[1] != "t" || !strings.Contains(got[2], tt.want) {
				t.Fatalf("rejection = %q, want a ToolCallError from t containing %q", got, tt.want)
			}
			if n := len(host.recorded()); n != 0 {
				t.Fatalf("a rejected argument was dispatched (%d calls)", n)
			}
		})
	}
}

func TestArgumentSnapshotIndependence(t *testing.T) {
	host := newFakeHost("t")
	host.handle = func(c Call, settle func(Settlement)) { settle(Settlement{Value: []byte(`null`)}) }
	res := runJS(t, `
		const o = {n: 1, list: [1]};
		const p1 = tools.t(o);
		o.n = 2; o.list.push(2);
		const p2 = tools.t(o);
		await Promise.all([p1, p2]);
		return "ok"`, host)
	wantValue(t, res, `"ok"`)
	calls := host.recorded()
	if len(calls) != 2 || string(calls[0].Args) != `{"n":1,"list":[1]}` || string(calls[1].Args) != `{"n":2,"list":[1,2]}` {
		t.Fatalf("calls = %+v", calls)
	}
}

func TestArgumentSnapshotDeepNesting(t *testing.T) {
	// 5,000 levels: deeper than the call-stack limit, snapshotted without recursion.
	host := newFakeHost("t")
	host.handle = func(c Call, settle func(Settlement)) { settle(Settlement{Value: c.Args}) }
	res := runJS(t, `
		let o = {leaf: true};
		for (let i = 0; i < 5000; i++) o = {n: o};
		let back = await tools.t(o), depth = 0;
		while (back.n) { back = back.n; depth++ }
		return [depth, back.leaf]`, host)
	wantValue(t, res, `[5000,true]`)
	args := host.recorded()[0].Args
	if want := strings.Repeat(`{"n":`, 5000) + `{"leaf":true}` + strings.Repeat(`}`, 5000); string(args) != want {
		t.Fatalf("deep argument was not snapshotted intact (%d bytes)", len(args))
	}
}

func TestArgumentCountAndSize(t *testing.T) {
	host := newFakeHost("t")
	res := runLang(t, `
		const out = [];
		try { await tools.t({}, 2) } catch (e) { out.push(e.message) }
		try { await tools.t({s: "x".repeat(200)}) } catch (e) { out.push(e.message) }
		return out`, JavaScript, host, Options{MaxArgBytes: 100})
	wantValue(t, res, `["tools.t takes one argument, got 2","argument is larger than 100 bytes as JSON"]`)
	if len(host.recorded()) != 0 {
		t.Fatal("a rejected call was dispatched")
	}
}

func TestResultSnapshot(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // JSON on success
		kind      string
		message   string
	}{
		{name: "undefined property omitted", src: `return {a: 1, b: undefined}`, want: `{"a":1}`},
		{name: "negative zero", src: `return -0`, want: `-0`},
		{name: "nested data", src: `return [{x: [1, {y: "z"}]}]`, want: `[{"x":[1,{"y":"z"}]}]`},
		{name: "null", src: `return null`, want: `null`},
		{name: "bigint", src: `return {n: 1n}`, kind: KindRuntime, message: "not JSON data: result at .n is a BigInt"},
		{name: "cycle", src: `const o = {}; o.self = o; return o`, kind: KindRuntime, message: "result at .self is a circular reference"},
		{name: "function", src: `return {f() {}}`, kind: KindRuntime, message: "result at .f is a function"},
		{name: "function at root", src: `const f = () => 1; return f`, kind: KindRuntime, message: "result is a function"},
		{name: "symbol", src: `return [Symbol()]`, kind: KindRuntime, message: "result at [0] is a symbol"},
		{name: "throwing getter", src: `return {get g() { throw new TypeError("getter") }}`, kind: KindRuntime, message: "result at .g could not be read: TypeError: getter"},
		{name: "undefined element is null", src: `return [undefined, , 1]`, want: `[null,null,1]`},
		{name: "NaN and infinities are null", src: `return {n: 0/0, i: [Infinity, -Infinity]}`, want: `{"n":null,"i":[null,null]}`},
		{name: "Date is its ISO string", src: `return {at: new Date(86400000)}`, want: `{"at":"1970-01-02T00:00:00.000Z"}`},
		{name: "toJSON", src: `class Money { constructor(c) { this.c = c } toJSON() { return (this.c / 100).toFixed(2) } } return [new Money(1250)]`, want: `["12.50"]`},
		{name: "toJSON returning undefined at the root", src: `return {toJSON() {}}`, want: ``},
		{name: "Map", src: `return {m: new Map([["a", 1]])}`, kind: KindRuntime, message: "result at .m is a Map: pass Object.fromEntries(map)"},
		{name: "Set", src: `return new Set([1])`, kind: KindRuntime, message: "result is a Set: pass [...set]"},
		{name: "too large", src: `return "x".repeat(300)`, kind: KindLimit, message: "larger than 256 bytes"},
		{name: "exponential sharing hits the size cap", src: `let a = [1]; for (let i = 0; i < 60; i++) a = [a, a]; return a`, kind: KindLimit, message: "larger than 256 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runLang(t, tt.src, JavaScript, nil, Options{MaxResultBytes: 256})
			if tt.kind != "" {
				wantFailure(t, res, tt.kind, tt.message)
				return
			}
			wantValue(t, res, tt.want)
			if string(res.Value) != tt.want {
				t.Fatalf("value = %s, want exactly %s", res.Value, tt.want)
			}
		})
	}
}

// FuzzSettlementRoundTrip feeds arbitrary bytes to the VM as a tool's value and has the program
// return it: invalid JSON must reject the call; valid JSON must come back meaning the same.
func FuzzSettlementRoundTrip(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud800"`, `-0`, `1e400`, `{"__proto__":1}`, `[`, `{"a":1,"a":2}`, `"\u0000"`, `123456789012345678901234567890`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		host := newFakeHost("v")
		host.handle = func(c Call, settle func(Settlement)) { settle(Settlement{Value: data}) }
		res := runLang(t, `try { return {v: await tools.v()} } catch (e) { if (e.name !== "ToolCallError") throw e; return "rejected" }`, JavaScript, host, Options{Timeout: 5 * time.Second})
		if res.Err != nil && res.Err.Kind == KindTimeout {
			t.Fatalf("value %q: %v", data, res.Err)
		}
		var want any
		valid := len(data) > 0 && json.Valid(data)
		if valid && json.Unmarshal(data, &want) != nil {
			// Valid JSON with a number beyond float64 (1e400): JSON.parse makes it
			// ±Infinity, which comes back as null or fails the run; nothing to compare.
			return
		}
		switch {
		case len(data) == 0:
			if res.Err != nil || string(res.Value) != `{}` {
				t.Fatalf("empty value: %+v", res)
			}
		case !valid:
			if res.Err == nil && string(res.Value) != `"rejected"` {
				t.Fatalf("invalid JSON %q was accepted: %s", data, res.Value)
			}
		case res.Err != nil:
			// Valid JSON the VM cannot hand back: numbers beyond float64, or nesting past the cap.
			if !strings.Contains(res.Err.Message, "Infinity") {
				t.Fatalf("valid JSON %q failed: %v", data, res.Err)
			}
		case string(res.Value) == `"rejected"`:
			if jsonDepth(data) <= MaxDataDepth {
				t.Fatalf("valid JSON %q was rejected", data)
			}
		default:
			var got struct{ V any }
			if err := json.Unmarshal(res.Value, &got); err != nil {
				t.Fatalf("result %s is not JSON: %v", res.Value, err)
			}
			wb, _ := json.Marshal(want)
			gb, _ := json.Marshal(got.V)
			if string(wb) != string(gb) {
				t.Fatalf("round trip of %q: got %s, want %s", data, gb, wb)
			}
		}
	})
}
