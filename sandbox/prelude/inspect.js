// The intrinsics the console's inspector reads objects through (console.go), taken when it first
// renders an object in a run: property descriptors (accessors are shown, never called), function
// source (classes), and the brand checks for what goja reports as plain objects (typed arrays,
// DataView, WeakMap, WeakSet, boxed symbols and bigints, Map and Set iterators). Go calls each
// with the object as `this` and catches what it throws.
(function () {
	"use strict";
	const getter = (o, k) => Object.getOwnPropertyDescriptor(o, k).get;
	const typedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
	const mapIterator = Object.getPrototypeOf(new Map().entries());
	const setIterator = Object.getPrototypeOf(new Set().values());
	return {
		descriptor: Object.getOwnPropertyDescriptor,
		descriptors: Object.getOwnPropertyDescriptors,
		functionSource: Function.prototype.toString,
		typedArrayPrototype,
		typedArrayTag: getter(typedArrayPrototype, Symbol.toStringTag),
		typedArrayLength: getter(typedArrayPrototype, "length"),
		dataViewPrototype: DataView.prototype,
		dataViewByteLength: getter(DataView.prototype, "byteLength"),
		dataViewByteOffset: getter(DataView.prototype, "byteOffset"),
		dataViewBuffer: getter(DataView.prototype, "buffer"),
		weakMapPrototype: WeakMap.prototype,
		weakMapHas: WeakMap.prototype.has,
		weakSetPrototype: WeakSet.prototype,
		weakSetHas: WeakSet.prototype.has,
		symbolPrototype: Symbol.prototype,
		symbolValueOf: Symbol.prototype.valueOf,
		bigIntPrototype: BigInt.prototype,
		bigIntValueOf: BigInt.prototype.valueOf,
		mapIteratorPrototype: mapIterator,
		mapIteratorNext: mapIterator.next,
		setIteratorPrototype: setIterator,
		setIteratorNext: setIterator.next,
	};
})
