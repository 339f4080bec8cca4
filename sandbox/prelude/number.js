// Number converting a BigInt exactly, as V8 does: goja truncates it to 64 bits, so
// Number(2n ** 64n) is 0 there. The wrapper takes the value's place everywhere a program can
// reach Number: the global, Number.prototype.constructor, and it keeps every static.
(function () {
	"use strict";
	const original = Number;
	// toNumeric is ToPrimitive with hint "number", leaving a BigInt as it is.
	function toNumeric(v) {
		if (v === null || (typeof v !== "object" && typeof v !== "function")) return v;
		const exotic = v[Symbol.toPrimitive];
		if (exotic !== undefined && exotic !== null) {
			const p = exotic.call(v, "number");
			if (p !== null && (typeof p === "object" || typeof p === "function")) {
				throw new TypeError("Cannot convert object to primitive value");
			}
			return p;
		}
		for (const name of ["valueOf", "toString"]) {
			const m = v[name];
			if (typeof m === "function") {
				const p = m.call(v);
				if (p === null || (typeof p !== "object" && typeof p !== "function")) return p;
			}
		}
		throw new TypeError("Cannot convert object to primitive value");
	}
	const wrapped = function Number(value) {
		let v = arguments.length === 0 ? 0 : toNumeric(value);
		// The decimal text of a BigInt is exact, and goja rounds text to the nearest double.
		if (typeof v === "bigint") v = original(`${v}`);
		return new.target === undefined ? original(v) : Reflect.construct(original, [v], new.target);
	};
	for (const key of Reflect.ownKeys(original)) {
		if (key !== "length" && key !== "name") {
			Object.defineProperty(wrapped, key, Object.getOwnPropertyDescriptor(original, key));
		}
	}
	Object.defineProperty(original.prototype, "constructor", {value: wrapped, writable: true, enumerable: false, configurable: true});
	Object.defineProperty(globalThis, "Number", {value: wrapped, writable: true, enumerable: false, configurable: true});
})
