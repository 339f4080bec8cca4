// Symbol.asyncIterator, Symbol.dispose and Symbol.asyncDispose, which goja lacks and which the
// syntax esbuild lowers (for await, async generators, using, await using) looks up; with them
// SuppressedError, DisposableStack and AsyncDisposableStack (explicit resource management).
(function () {
	"use strict";
	for (const name of ["asyncIterator", "dispose", "asyncDispose"]) {
		if (typeof Symbol[name] !== "symbol") {
			Object.defineProperty(Symbol, name, {value: Symbol("Symbol." + name)});
		}
	}
	class SuppressedError extends Error {
		constructor(error, suppressed, message = undefined) {
			super(message === undefined ? undefined : String(message));
			Object.defineProperty(this, "error", {value: error, writable: true, configurable: true});
			Object.defineProperty(this, "suppressed", {value: suppressed, writable: true, configurable: true});
		}
	}
	Object.defineProperty(SuppressedError.prototype, "name", {value: "SuppressedError", writable: true, configurable: true});
	Object.defineProperty(SuppressedError.prototype, "message", {value: "", writable: true, configurable: true});

	function disposer(value, async) {
		if (value === null || value === undefined) return undefined;
		if (typeof value !== "object" && typeof value !== "function") throw new TypeError("Object expected");
		let method = async ? value[Symbol.asyncDispose] : undefined;
		if (method === undefined || method === null) method = value[Symbol.dispose];
		if (typeof method !== "function") throw new TypeError("Object not disposable");
		return method;
	}
	const stacks = new WeakMap(); // stack → {disposed, entries}
	function state(stack, what) {
		const s = stacks.get(stack);
		if (!s) throw new TypeError(what + " called on an incompatible receiver");
		return s;
	}
	function live(s, what) {
		if (s.disposed) throw new ReferenceError("Cannot call " + what + " on an already-disposed stack");
	}
	function take(s) {
		const entries = s.entries;
		s.entries = [];
		s.disposed = true;
		return entries;
	}
	// The methods that dispose a stack: DisposableStack's, and AsyncDisposableStack's, which
	// awaits each step. Each error after the first suppresses the one before it.
	const disposeMethods = {
		dispose() {
			const s = state(this, "DisposableStack.prototype.dispose");
			if (s.disposed) return undefined;
			let error, failed = false;
			const entries = take(s);
			for (let i = entries.length - 1; i >= 0; i--) {
				try {
					entries[i]();
				} catch (e) {
					error = failed ? new SuppressedError(e, error, "An error was suppressed during disposal") : e;
					failed = true;
				}
			}
			if (failed) throw error;
			return undefined;
		},
		async disposeAsync() {
			const s = state(this, "AsyncDisposableStack.prototype.disposeAsync");
			if (s.disposed) return undefined;
			let error, failed = false;
			const entries = take(s);
			for (let i = entries.length - 1; i >= 0; i--) {
				try {
					await entries[i]();
				} catch (e) {
					error = failed ? new SuppressedError(e, error, "An error was suppressed during disposal") : e;
					failed = true;
				}
			}
			if (failed) throw error;
			return undefined;
		},
	};
	// stackClass makes DisposableStack, or AsyncDisposableStack when async: the two differ
	// only in the method of disposeMethods they have (dispose or disposeAsync, also under
	// Symbol.dispose or Symbol.asyncDispose) and in what use takes from a resource.
	function stackClass(async) {
		const kind = async ? "AsyncDisposableStack" : "DisposableStack";
		const disposeName = async ? "disposeAsync" : "dispose";
		class Stack {
			constructor() {
				stacks.set(this, {disposed: false, entries: []});
			}
			get disposed() {
				return state(this, kind + ".prototype.disposed").disposed;
			}
		}
		Object.defineProperty(Stack, "name", {value: kind, configurable: true});
		const methods = {
			[disposeName]: disposeMethods[disposeName],
			use(value) {
				const s = state(this, kind + ".prototype.use");
				live(s, "use");
				const method = disposer(value, async);
				if (method) s.entries.push(() => method.call(value));
				return value;
			},
			adopt(value, onDispose) {
				const s = state(this, kind + ".prototype.adopt");
				live(s, "adopt");
				if (typeof onDispose !== "function") throw new TypeError("onDispose must be a function");
				s.entries.push(() => onDispose.call(undefined, value));
				return value;
			},
			defer(onDispose) {
				const s = state(this, kind + ".prototype.defer");
				live(s, "defer");
				if (typeof onDispose !== "function") throw new TypeError("onDispose must be a function");
				s.entries.push(() => onDispose.call(undefined));
			},
			move() {
				const s = state(this, kind + ".prototype.move");
				live(s, "move");
				const next = new Stack();
				stacks.get(next).entries = s.entries;
				s.entries = [];
				s.disposed = true;
				return next;
			},
		};
		for (const name of Object.keys(methods)) {
			Object.defineProperty(Stack.prototype, name, {value: methods[name], writable: true, configurable: true});
		}
		Object.defineProperty(Stack.prototype, Symbol.toStringTag, {value: kind, configurable: true});
		const symbol = async ? Symbol.asyncDispose : Symbol.dispose;
		Object.defineProperty(Stack.prototype, symbol, {value: methods[disposeName], writable: true, configurable: true});
		return Stack;
	}
	const DisposableStack = stackClass(false);
	const AsyncDisposableStack = stackClass(true);
	return {SuppressedError, DisposableStack, AsyncDisposableStack};
})
