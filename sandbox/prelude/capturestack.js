// Error.captureStackTrace (V8's, which Node programs use) and Error.stackTraceLimit.
(function () {
	"use strict";
	const methods = {
		captureStackTrace(target, constructorOpt = undefined) {
			if (target === null || (typeof target !== "object" && typeof target !== "function")) {
				throw new TypeError("Invalid argument");
			}
			let frames = String(new Error().stack).split("\n").slice(1);
			frames = frames.filter((f) => !/\bcaptureStackTrace\b/.test(f));
			if (typeof constructorOpt === "function" && constructorOpt.name) {
				const at = frames.findIndex((f) => f.trim().startsWith("at " + constructorOpt.name + " "));
				if (at >= 0) frames = frames.slice(at + 1);
			}
			let header;
			try {
				const name = target.name === undefined ? "Error" : String(target.name);
				const message = target.message === undefined ? "" : String(target.message);
				header = name && message ? name + ": " + message : name || message;
			} catch (e) {
				header = "Error";
			}
			Object.defineProperty(target, "stack", {value: [header, ...frames].join("\n"), writable: true, configurable: true});
		},
	};
	Object.defineProperty(Error, "captureStackTrace", {value: methods.captureStackTrace, writable: true, configurable: true});
	if (!("stackTraceLimit" in Error)) {
		Object.defineProperty(Error, "stackTraceLimit", {value: 10, writable: true, enumerable: true, configurable: true});
	}
})
