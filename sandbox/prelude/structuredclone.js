// structuredClone (HTML's structured clone algorithm, without transfer): primitives, wrapper
// objects, Date, RegExp, ArrayBuffer, typed arrays, DataView, Map, Set, errors, arrays and
// plain objects (own enumerable string keys; other objects lose their prototype), with shared
// and circular references kept. Functions, symbols and platform objects cannot be cloned.
// natives: DOMException (a function returning the class); limit (the most values one clone
// may copy); overCap(n) fails the run past it.
(function (natives) {
	"use strict";
	const tag = (v) => Object.prototype.toString.call(v).slice(8, -1);
	const errorNames = new Set(["Error", "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError"]);
	const typedArrays = new Set(["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array",
		"Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"]);
	function fail(v) {
		let what;
		try {
			what = typeof v === "function" ? String(v) : typeof v === "symbol" ? v.toString() : "#<" + tag(v) + ">";
		} catch (e) {
			what = "The value";
		}
		const DOMException = natives.DOMException();
		throw new DOMException(what + " could not be cloned.", "DataCloneError");
	}
	function structuredClone(value, options = undefined) {
		if (arguments.length === 0) throw new TypeError('The "value" argument must be specified');
		const memo = new Map();
		const work = []; // [source, target] pairs whose properties are still to copy
		let count = 0;
		function clone(v) {
			if (typeof v === "symbol" || typeof v === "function") fail(v);
			if (v === null || typeof v !== "object") return v;
			if (memo.has(v)) return memo.get(v);
			if (++count > natives.limit) natives.overCap(count);
			let out;
			const t = tag(v);
			if (Array.isArray(v)) {
				out = new Array(v.length);
				memo.set(v, out);
				work.push([v, out]);
				return out;
			}
			switch (t) {
				case "Boolean": out = Object(Boolean.prototype.valueOf.call(v)); break;
				case "Number": out = Object(Number.prototype.valueOf.call(v)); break;
				case "String": out = Object(String.prototype.valueOf.call(v)); break;
				case "BigInt": out = Object(BigInt.prototype.valueOf.call(v)); break;
				case "Date": out = new Date(Date.prototype.getTime.call(v)); break;
				case "RegExp": out = new RegExp(v.source, v.flags); break;
				case "ArrayBuffer": out = ArrayBuffer.prototype.slice.call(v, 0); break;
				case "DataView": out = new DataView(clone(v.buffer), v.byteOffset, v.byteLength); break;
				case "Map": {
					out = new Map();
					memo.set(v, out);
					for (const [k, val] of Map.prototype.entries.call(v)) out.set(clone(k), clone(val));
					return out;
				}
				case "Set": {
					out = new Set();
					memo.set(v, out);
					for (const val of Set.prototype.values.call(v)) out.add(clone(val));
					return out;
				}
				case "Error": {
					const name = errorNames.has(v.name) ? v.name : "Error";
					const Ctor = globalThis[name] && globalThis[name].prototype instanceof Error ? globalThis[name] : Error;
					out = Object.create(Ctor === Error ? Error.prototype : Ctor.prototype);
					memo.set(v, out);
					if (Object.prototype.hasOwnProperty.call(v, "message")) {
						Object.defineProperty(out, "message", {value: String(v.message), writable: true, configurable: true});
					}
					if (v.stack !== undefined) Object.defineProperty(out, "stack", {value: String(v.stack), writable: true, configurable: true});
					if (Object.prototype.hasOwnProperty.call(v, "cause")) {
						Object.defineProperty(out, "cause", {value: clone(v.cause), writable: true, configurable: true});
					}
					return out;
				}
				case "Object": case "Arguments":
					if (v instanceof Promise || v instanceof WeakMap || v instanceof WeakSet) fail(v);
					out = {};
					memo.set(v, out);
					work.push([v, out]);
					return out;
				default:
					if (typedArrays.has(t)) {
						out = new globalThis[t](clone(v.buffer), v.byteOffset, v.length);
						break;
					}
					if (t === "Promise" || t === "WeakMap" || t === "WeakSet" || t === "WeakRef" || t === "Generator") fail(v);
					out = {};
					memo.set(v, out);
					work.push([v, out]);
					return out;
			}
			memo.set(v, out);
			return out;
		}
		const root = clone(value);
		while (work.length > 0) {
			const [src, dst] = work.pop();
			for (const key of Object.keys(src)) {
				const v = clone(src[key]);
				Object.defineProperty(dst, key, {value: v, writable: true, enumerable: true, configurable: true});
			}
		}
		return root;
	}
	return {structuredClone};
})
