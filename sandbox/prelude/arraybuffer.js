// ArrayBuffer additions goja lacks: transfer and transferToFixedLength (ES2024), detached,
// resizable and maxByteLength (always false and byteLength: buffers here are fixed-length),
// and %TypedArray%.from of a string, the base64-decoding idiom
// Uint8Array.from(atob(s), c => c.charCodeAt(0)), which goja refuses as "not an object".
// A resizable buffer (new ArrayBuffer(n, {maxByteLength})) is refused with a TypeError naming
// the alternatives: goja's typed arrays cannot follow a buffer whose length changes.
(function (natives) {
	"use strict";
	const proto = ArrayBuffer.prototype;
	const byteLength = Object.getOwnPropertyDescriptor(proto, "byteLength").get;
	function buffer(that, name) {
		// byteLength's getter throws goja's TypeError for anything but an ArrayBuffer.
		try {
			byteLength.call(that);
		} catch (e) {
			throw new TypeError(`Method ArrayBuffer.prototype.${name} called on incompatible receiver ${typeof that === "object" && that !== null ? "#<Object>" : String(that)}`);
		}
		return that;
	}
	// index is ToIndex: an integer from 0 to 2**53 - 1, or a RangeError.
	function index(v) {
		if (v === undefined) return undefined;
		let n = Math.trunc(Number(v));
		if (Number.isNaN(n)) n = 0;
		if (n < 0 || n > Number.MAX_SAFE_INTEGER) throw new RangeError("Invalid array buffer length");
		return n;
	}
	const methods = {
		transfer(newLength) {
			return natives.transfer(buffer(this, "transfer"), index(newLength), "transfer");
		},
		transferToFixedLength(newLength) {
			return natives.transfer(buffer(this, "transferToFixedLength"), index(newLength), "transferToFixedLength");
		},
	};
	// goja's slice of a detached buffer answers an empty one; V8 throws.
	const slice = proto.slice;
	methods.slice = {
		slice(start, end) {
			if (natives.detached(buffer(this, "slice"))) {
				throw new TypeError("Cannot perform ArrayBuffer.prototype.slice on a detached ArrayBuffer");
			}
			return Reflect.apply(slice, this, arguments);
		},
	}.slice;
	for (const name of ["transfer", "transferToFixedLength", "slice"]) {
		Object.defineProperty(proto, name, {value: methods[name], writable: true, enumerable: false, configurable: true});
	}
	const getters = {
		get detached() {
			return natives.detached(buffer(this, "detached"));
		},
		get resizable() {
			buffer(this, "resizable");
			return false;
		},
		get maxByteLength() {
			return byteLength.call(buffer(this, "maxByteLength"));
		},
	};
	for (const name of ["detached", "resizable", "maxByteLength"]) {
		const d = Object.getOwnPropertyDescriptor(getters, name);
		Object.defineProperty(proto, name, {get: d.get, enumerable: false, configurable: true});
	}

	const TypedArray = Object.getPrototypeOf(Uint8Array);
	const from = TypedArray.from;
	const typedFrom = {
		from(source, ...rest) {
			// A primitive source is read as its object: a string by its iterator (code points), a
			// number or boolean as an empty array-like, as the specification has it.
			if (source !== null && source !== undefined && typeof source !== "object" && typeof source !== "function") {
				source = Object(source);
			}
			return Reflect.apply(from, this, [source, ...rest]);
		},
	}.from;
	Object.defineProperty(typedFrom, "length", {value: 1});
	Object.defineProperty(TypedArray, "from", {value: typedFrom, writable: true, enumerable: false, configurable: true});

	const Original = ArrayBuffer;
	const wrapped = function ArrayBuffer(length, options) {
		if (new.target === undefined) throw new TypeError("Constructor ArrayBuffer requires 'new'");
		if (options !== null && typeof options === "object" && options.maxByteLength !== undefined) {
			throw new TypeError("resizable ArrayBuffer (maxByteLength) is not supported here: allocate the largest size up front, or copy into a larger buffer with buffer.transfer(newLength)");
		}
		return Reflect.construct(Original, [length], new.target);
	};
	for (const key of Reflect.ownKeys(Original)) {
		if (key !== "length" && key !== "name") {
			Object.defineProperty(wrapped, key, Object.getOwnPropertyDescriptor(Original, key));
		}
	}
	Object.defineProperty(wrapped, "length", {value: 1});
	Object.defineProperty(proto, "constructor", {value: wrapped, writable: true, enumerable: false, configurable: true});
	Object.defineProperty(globalThis, "ArrayBuffer", {value: wrapped, writable: true, enumerable: false, configurable: true});
})
