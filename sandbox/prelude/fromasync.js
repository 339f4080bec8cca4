// Array.fromAsync (ES2024).
(function () {
	"use strict";
	const methods = {
		async fromAsync(items, mapfn = undefined, thisArg = undefined) {
			if (items === null || items === undefined) {
				throw new TypeError(String(items) + " is not iterable or array-like");
			}
			if (mapfn !== undefined && typeof mapfn !== "function") {
				throw new TypeError(String(mapfn) + " is not a function");
			}
			const C = this;
			const out = typeof C === "function" ? new C() : [];
			let k = 0;
			const add = async (v) => {
				if (mapfn !== undefined) v = await mapfn.call(thisArg, v, k);
				Object.defineProperty(out, k, {value: v, writable: true, enumerable: true, configurable: true});
				k++;
			};
			const asyncMethod = items[Symbol.asyncIterator];
			if (asyncMethod !== undefined && asyncMethod !== null) {
				const it = asyncMethod.call(items);
				for (;;) {
					const r = await it.next();
					if (r.done) break;
					try {
						await add(r.value);
					} catch (e) {
						if (typeof it.return === "function") await it.return();
						throw e;
					}
				}
			} else if (items[Symbol.iterator] !== undefined && items[Symbol.iterator] !== null) {
				const it = items[Symbol.iterator]();
				for (;;) {
					const r = it.next();
					if (r.done) break;
					try {
						await add(await r.value);
					} catch (e) {
						if (typeof it.return === "function") it.return();
						throw e;
					}
				}
			} else {
				const o = Object(items);
				const n = Math.min(Math.max(Math.trunc(Number(o.length)) || 0, 0), Number.MAX_SAFE_INTEGER);
				for (let i = 0; i < n; i++) await add(await o[i]);
			}
			out.length = k;
			return out;
		},
	};
	Object.defineProperty(Array, "fromAsync", {value: methods.fromAsync, writable: true, configurable: true});
})
