// crypto: getRandomValues, randomUUID and subtle.digest, backed by Go's crypto packages.
// natives: fill(typedArray), uuid(), digest(algorithm, bytes) → ArrayBuffer or a string
// naming the error; bytes(source); DOMException (the class).
(function (natives) {
	"use strict";
	const integerArrays = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
		"Int32Array", "Uint32Array", "BigInt64Array", "BigUint64Array"];
	const tag = (v) => Object.prototype.toString.call(v).slice(8, -1);
	const subtle = {
		digest(algorithm, data) {
			try {
				const name = typeof algorithm === "string" ? algorithm : algorithm && algorithm.name;
				const result = natives.digest(String(name), natives.bytes(data));
				if (typeof result === "string") {
					return Promise.reject(new natives.DOMException(result, "NotSupportedError"));
				}
				return Promise.resolve(result);
			} catch (e) {
				return Promise.reject(e);
			}
		},
	};
	Object.defineProperty(subtle, Symbol.toStringTag, {value: "SubtleCrypto", configurable: true});
	const crypto = {
		getRandomValues(array) {
			if (!integerArrays.includes(tag(array))) {
				throw new natives.DOMException("The data argument must be an integer-type TypedArray", "TypeMismatchError");
			}
			if (array.byteLength > 65536) {
				throw new natives.DOMException("The ArrayBufferView's byte length (" + array.byteLength + ") exceeds the number of bytes of entropy available via this API (65536)", "QuotaExceededError");
			}
			natives.fill(array);
			return array;
		},
		randomUUID() {
			return natives.uuid();
		},
		get subtle() {
			return subtle;
		},
	};
	Object.defineProperty(crypto, Symbol.toStringTag, {value: "Crypto", configurable: true});
	for (const k of ["getRandomValues", "randomUUID", "subtle"]) {
		const d = Object.getOwnPropertyDescriptor(crypto, k);
		d.enumerable = false;
		Object.defineProperty(crypto, k, d);
	}
	return crypto;
})
