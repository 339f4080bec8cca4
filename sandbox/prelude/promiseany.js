// Promise.any rejects with an AggregateError that says why, as V8's does:
// goja's has no message. The native any runs with a constructor that hands
// it the real capability, its reject wrapped to add the message first, so
// nothing else changes: the same promise type, the same ticks.
(function () {
	"use strict";
	const any = Promise.any;
	const hasOwn = Object.prototype.hasOwnProperty;
	const methods = {
		any(iterable) {
			const C = this;
			if (typeof C !== "function") {
				return any.call(C, iterable); // the native TypeError
			}
			function Capability(executor) {
				return new C((resolve, reject) =>
					executor(resolve, (e) => {
						if (e instanceof AggregateError && !hasOwn.call(e, "message")) {
							Object.defineProperty(e, "message", {value: "All promises were rejected", writable: true, configurable: true});
						}
						return reject(e);
					}),
				);
			}
			Capability.resolve = (value) => C.resolve(value);
			return any.call(Capability, iterable);
		},
	};
	Object.defineProperty(Promise, "any", {value: methods.any, writable: true, configurable: true});
})
