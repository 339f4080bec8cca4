// Promise.withResolvers (ES2024).
(function () {
	"use strict";
	const methods = {
		withResolvers() {
			let resolve, reject;
			const promise = new this((res, rej) => {
				resolve = res;
				reject = rej;
			});
			return {promise, resolve, reject};
		},
	};
	Object.defineProperty(Promise, "withResolvers", {value: methods.withResolvers, writable: true, configurable: true});
})
