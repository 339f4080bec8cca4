package sandbox

import "testing"

// Each program throws when a value is wrong and returns "ok" otherwise; the corpus
// (testdata/corpus) checks the same features against Node's values.
func TestPlatformBuiltins(t *testing.T) {
	runValueCases(t, []valueCase{
		{"Object.groupBy", `const g = Object.groupBy([1, 2, 3, 4], x => x % 2 ? "odd" : "even"); return [Object.getPrototypeOf(g), g]`, `[null,{"odd":[1,3],"even":[2,4]}]`},
		{"Map.groupBy", `const m = Map.groupBy([1, 2, 3], x => x > 1); return [...m.entries()]`, `[[false,[1]],[true,[2,3]]]`},
		{"Array.fromAsync", `return await Array.fromAsync([Promise.resolve(1), 2], x => x * 10)`, `[10,20]`},
		{"Promise.withResolvers", `const {promise, resolve} = Promise.withResolvers(); setTimeout(() => resolve(5), 1); return await promise`, `5`},
		{"Promise.any's AggregateError", `try { await Promise.any([Promise.reject(new Error("a")), Promise.reject(2)]) } catch (e) { return [e instanceof AggregateError, e.message, e.errors.length, Object.keys(e), new AggregateError([]).message, Promise.any.name, Promise.any.length] }`, `[true,"All promises were rejected",2,[],"","any",1]`},
		{"Promise.any keeps its ticks and species", `class P extends Promise {} const log = []; Promise.any([Promise.resolve(1)]).then(() => log.push("any")); Promise.resolve().then(() => log.push("a")).then(() => log.push("b")).then(() => log.push("c")); await new Promise(r => setTimeout(r, 1)); return [log, P.any([1]) instanceof P, await Promise.any([Promise.reject(1), 5])]`, `[["a","any","b","c"],true,5]`},
		{"isWellFormed", `return ["ab".isWellFormed(), "a\uD800".isWellFormed(), "a\uD800b".toWellFormed() === "a\uFFFDb"]`, `[true,false,true]`},
		{"iterator helpers", `return [1, 2, 3, 4].values().map(x => x * 2).filter(x => x > 2).take(2).toArray()`, `[4,6]`},
		{"iterator helpers on generators", `function* g() { let i = 0; while (true) yield i++ } return [g().drop(2).take(3).toArray(), g().take(5).reduce((a, b) => a + b), g().some(x => x > 3), typeof Iterator.from]`, `[[2,3,4],10,true,"function"]`},
		{"Iterator.from and flatMap", `return Iterator.from({next() { return {done: this.n > 2, value: this.n++} }, n: 0}).flatMap(x => [x, x]).toArray()`, `[0,0,1,1,2,2]`},
		{"map iterator helper", `return new Map([["a", 1]]).entries().map(([k, v]) => k + v).toArray()`, `["a1"]`},
		{"WeakRef", `const o = {a: 1}; const w = new WeakRef(o); const f = new FinalizationRegistry(() => {}); f.register(o, "x", o); return [w.deref() === o, f.unregister(o), String(w)]`, `[true,true,"[object WeakRef]"]`},
		{"captureStackTrace", `const o = {}; Error.captureStackTrace(o); return typeof o.stack`, `"string"`},
		{"Symbol.asyncIterator for await", "const src = {async *[Symbol.asyncIterator]() { yield 1; yield 2 }}; const out = []; for await (const v of src) out.push(v); return [out, typeof Symbol.asyncIterator]", `[[1,2],"symbol"]`},
		{"hand-written async iterator", "const it = {[Symbol.asyncIterator]() { let i = 0; return {next: async () => ({done: i >= 2, value: i++})} }}; const out = []; for await (const v of it) out.push(v); return out", `[0,1]`},
		{"using", "const log = []; { using r = {[Symbol.dispose]() { log.push('disposed') }}; log.push('body') } return log", `["body","disposed"]`},
		{"await using", "const log = []; { await using r = {async [Symbol.asyncDispose]() { log.push('async disposed') }}; log.push('body') } return log", `["body","async disposed"]`},
		{"DisposableStack", "const log = []; const s = new DisposableStack(); s.defer(() => log.push(1)); s.adopt(2, v => log.push(v)); s.dispose(); return [log, s.disposed]", `[[2,1],true]`},
		{"structuredClone", `const d = new Date(0); const src = {d, m: new Map([[1, {x: [1, 2]}]]), s: new Set([1]), u: new Uint8Array([1, 2])}; src.self = src; const c = structuredClone(src); return [c.self === c, c.d instanceof Date && c.d !== d, c.m.get(1).x, [...c.s], Array.from(c.u)]`, `[true,true,[1,2],[1],[1,2]]`},
		{"structuredClone of a function", `try { structuredClone({f() {}}) } catch (e) { return [e.name, e instanceof DOMException, e.code] }`, `["DataCloneError",true,25]`},
		{"TextEncoder and TextDecoder", `const b = new TextEncoder().encode("héllo €"); return [Array.from(b).length, new TextDecoder().decode(b), new TextDecoder("utf-16le").decode(new Uint8Array([104, 0, 105, 0])), new TextDecoder().decode(new Uint8Array([0xE2, 0x82]))]`, `[10,"héllo €","hi","\uFFFD"]`},
		{"TextDecoder stream and fatal", `const d = new TextDecoder(); const euro = [0xE2, 0x82, 0xAC]; const a = d.decode(new Uint8Array(euro.slice(0, 1)), {stream: true}); const b = d.decode(new Uint8Array(euro.slice(1))); let fatal; try { new TextDecoder("utf-8", {fatal: true}).decode(new Uint8Array([0xFF])) } catch (e) { fatal = e.name } return [a, b, fatal]`, `["","€","TypeError"]`},
		{"encodeInto", `const u = new Uint8Array(4); return new TextEncoder().encodeInto("a€b", u)`, `{"read":2,"written":4}`},
		{"atob and btoa", `let err; try { atob("*") } catch (e) { err = e.name } return [btoa("hello"), atob("aGVsbG8="), atob(" aGVs bG8 "), err]`, `["aGVsbG8=","hello","hello","InvalidCharacterError"]`},
		{"AbortController", `const c = new AbortController(); const seen = []; c.signal.addEventListener("abort", e => seen.push(e.type)); c.signal.onabort = () => seen.push("on"); c.abort("why"); c.abort("again"); return [c.signal.aborted, c.signal.reason, seen]`, `[true,"why",["abort","on"]]`},
		{"AbortSignal.timeout and any", `const s = AbortSignal.timeout(5); const any = AbortSignal.any([s, new AbortController().signal]); await new Promise(r => s.addEventListener("abort", r)); return [s.reason.name, any.aborted, any.reason.name]`, `["TimeoutError",true,"TimeoutError"]`},
		{"AbortSignal.abort default reason", `const s = AbortSignal.abort(); try { s.throwIfAborted() } catch (e) { return [e.name, e.message] }`, `["AbortError","This operation was aborted"]`},
		{"EventTarget", `const t = new EventTarget(); const got = []; const h = e => got.push(e.detail); t.addEventListener("x", h); t.addEventListener("x", h); t.addEventListener("x", {handleEvent(e) { got.push("obj") }}, {once: true}); t.dispatchEvent(new CustomEvent("x", {detail: 1})); t.removeEventListener("x", h); t.dispatchEvent(new CustomEvent("x", {detail: 2})); const e = new Event("y", {cancelable: true}); t.addEventListener("y", e => e.preventDefault()); return [got, t.dispatchEvent(e), e.defaultPrevented]`, `[[1,"obj"],false,true]`},
		{"crypto", `const u = crypto.randomUUID(); const a = crypto.getRandomValues(new Uint8Array(16)); const h = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode("abc"))); return [/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u), a.length, Array.from(h.slice(0, 4))]`, `[true,16,[186,120,22,191]]`},
		{"crypto errors", `let a, b; try { crypto.getRandomValues(new Float64Array(1)) } catch (e) { a = e.name } try { await crypto.subtle.digest("MD5", new Uint8Array(1)) } catch (e) { b = e.name } return [a, b]`, `["TypeMismatchError","NotSupportedError"]`},
		{"performance", `const a = performance.now(); await new Promise(r => setTimeout(r, 5)); const b = performance.now(); performance.mark("m"); return [b - a >= 4, typeof performance.timeOrigin, performance.getEntriesByName("m").length]`, `[true,"number",1]`},
		{"DOMException", `const e = new DOMException("m", "NotFoundError"); return [e.name, e.message, e.code, e instanceof Error, String(e)]`, `["NotFoundError","m",8,true,"NotFoundError: m"]`},
		{"Number of a large BigInt", `return [Number(2n ** 64n), Number(-(2n ** 70n)), String(Number(2n ** 1024n)), Number(2n ** 53n + 1n), new Number(2n ** 64n) + 0]`, `[18446744073709552000,-1180591620717411300000,"Infinity",9007199254740992,18446744073709552000]`},
		{"Number keeps its statics and identity", `return [(1).constructor === Number, Number.parseFloat === parseFloat, Number.EPSILON > 0, Object.getOwnPropertyNames(Number).length, 1n > 0]`, `[true,true,true,17,true]`},
		{"Number is goja's without a BigInt in sight", `return String(Number).includes("native code")`, `true`},
		{"Uint8Array.from a string", `return [Array.from(Uint8Array.from(atob("aGk="), c => c.charCodeAt(0))), Array.from(Uint8Array.from("12")), Uint8Array.from(7).length]`, `[[104,105],[1,2],0]`},
		{"ArrayBuffer transfer detaches", `const a = new Uint8Array([5, 6]); const b = a.buffer.transfer(3); let e; try { a.buffer.slice(0) } catch (x) { e = x.name } return [a.buffer.detached, a.length, Array.from(new Uint8Array(b)), e, b.resizable, b.maxByteLength]`, `[true,0,[5,6,0],"TypeError",false,3]`},
		{"resizable ArrayBuffer refused catchably", `try { new ArrayBuffer(1, {maxByteLength: 2}) } catch (e) { return [e.name, e.message.includes("transfer(newLength)"), new ArrayBuffer(2, {}).byteLength] }`, `["TypeError",true,2]`},
		{"Math.sin, cos and tan as V8's", `return [Math.sin(-19.95) === -0.8914087044468666, Math.cos(-19.98) === 0.426258135900103, Math.tan(-20) === -2.237160944224742, Math.sin.name, Math.tan.length, Object.keys(Math).includes("sin")]`, `[true,true,true,"sin",1,false]`},
		{"parseInt of a negative zero", `return [Object.is(parseInt("-0"), -0), Object.is(Number.parseInt(" -0x0", 16), -0), Number.parseInt === parseInt, parseInt("-7"), Object.is(parseInt("0"), 0)]`, `[true,true,true,-7,true]`},
	})
}
