// DOMException, Event, CustomEvent, EventTarget, AbortController and AbortSignal (WHATWG DOM).
// natives: now() (ms on the run's clock), setTimeout (the run's), report(e) (fails the run
// with an exception a listener threw).
(function (natives) {
	"use strict";
	const defineProperty = Object.defineProperty;
	const codes = {
		IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
		NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
		SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
		TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21,
		QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
	};
	const domState = new WeakMap();
	class DOMException extends Error {
		constructor(message = "", options = "Error") {
			super(String(message));
			let name = "Error";
			if (options !== null && typeof options === "object") {
				if ("name" in options) name = String(options.name);
				if ("cause" in options) defineProperty(this, "cause", {value: options.cause, writable: true, configurable: true});
			} else if (options !== undefined) {
				name = String(options);
			}
			domState.set(this, name);
		}
		get name() {
			return domState.has(this) ? domState.get(this) : "Error";
		}
		get code() {
			return codes[domState.get(this)] || 0;
		}
	}
	defineProperty(DOMException.prototype, Symbol.toStringTag, {value: "DOMException", configurable: true});
	const constantNames = {
		INDEX_SIZE_ERR: 1, DOMSTRING_SIZE_ERR: 2, HIERARCHY_REQUEST_ERR: 3, WRONG_DOCUMENT_ERR: 4,
		INVALID_CHARACTER_ERR: 5, NO_DATA_ALLOWED_ERR: 6, NO_MODIFICATION_ALLOWED_ERR: 7, NOT_FOUND_ERR: 8,
		NOT_SUPPORTED_ERR: 9, INUSE_ATTRIBUTE_ERR: 10, INVALID_STATE_ERR: 11, SYNTAX_ERR: 12,
		INVALID_MODIFICATION_ERR: 13, NAMESPACE_ERR: 14, INVALID_ACCESS_ERR: 15, VALIDATION_ERR: 16,
		TYPE_MISMATCH_ERR: 17, SECURITY_ERR: 18, NETWORK_ERR: 19, ABORT_ERR: 20, URL_MISMATCH_ERR: 21,
		QUOTA_EXCEEDED_ERR: 22, TIMEOUT_ERR: 23, INVALID_NODE_TYPE_ERR: 24, DATA_CLONE_ERR: 25,
	};
	for (const k of Object.keys(constantNames)) {
		defineProperty(DOMException, k, {value: constantNames[k], enumerable: true});
		defineProperty(DOMException.prototype, k, {value: constantNames[k], enumerable: true});
	}

	const events = new WeakMap();
	function ev(e, what) {
		const s = events.get(e);
		if (!s) throw new TypeError("Value of \"this\" must be of type Event");
		return s;
	}
	class Event {
		constructor(type, options = undefined) {
			if (arguments.length === 0) throw new TypeError('The "type" argument must be specified');
			const o = options === undefined || options === null ? {} : options;
			events.set(this, {
				type: String(type), bubbles: !!o.bubbles, cancelable: !!o.cancelable, composed: !!o.composed,
				defaultPrevented: false, target: null, currentTarget: null, eventPhase: 0,
				stop: false, stopImmediate: false, timeStamp: natives.now(), dispatching: false, passive: false,
			});
		}
		get type() { return ev(this).type; }
		get bubbles() { return ev(this).bubbles; }
		get cancelable() { return ev(this).cancelable; }
		get composed() { return ev(this).composed; }
		get defaultPrevented() { return ev(this).defaultPrevented; }
		get target() { return ev(this).target; }
		get currentTarget() { return ev(this).currentTarget; }
		get srcElement() { return ev(this).target; }
		get eventPhase() { return ev(this).eventPhase; }
		get timeStamp() { return ev(this).timeStamp; }
		get isTrusted() { return false; }
		get returnValue() { return !ev(this).defaultPrevented; }
		get cancelBubble() { return ev(this).stop; }
		set cancelBubble(v) { if (v) ev(this).stop = true; }
		preventDefault() {
			const s = ev(this);
			if (s.cancelable && !s.passive) s.defaultPrevented = true;
		}
		stopPropagation() { ev(this).stop = true; }
		stopImmediatePropagation() {
			const s = ev(this);
			s.stop = true;
			s.stopImmediate = true;
		}
		composedPath() {
			const s = ev(this);
			return s.dispatching && s.currentTarget ? [s.currentTarget] : [];
		}
	}
	for (const [k, v] of [["NONE", 0], ["CAPTURING_PHASE", 1], ["AT_TARGET", 2], ["BUBBLING_PHASE", 3]]) {
		defineProperty(Event, k, {value: v, enumerable: true});
		defineProperty(Event.prototype, k, {value: v, enumerable: true});
	}
	defineProperty(Event.prototype, Symbol.toStringTag, {value: "Event", configurable: true});
	class CustomEvent extends Event {
		#detail;
		constructor(type, options = undefined) {
			super(type, options);
			this.#detail = options && options.detail !== undefined ? options.detail : null;
		}
		get detail() { return this.#detail; }
	}
	defineProperty(CustomEvent.prototype, Symbol.toStringTag, {value: "CustomEvent", configurable: true});

	const targets = new WeakMap();
	function listeners(t) {
		let l = targets.get(t);
		if (!l) {
			if (!(t instanceof EventTarget)) throw new TypeError("Value of \"this\" must be of type EventTarget");
			l = new Map();
			targets.set(t, l);
		}
		return l;
	}
	function flags(options) {
		if (typeof options === "boolean") return {capture: options};
		return options === null || options === undefined ? {} : options;
	}
	class EventTarget {
		constructor() {
			targets.set(this, new Map());
		}
		addEventListener(type, listener, options = undefined) {
			const all = listeners(this);
			if (listener === null || listener === undefined) return;
			const o = flags(options);
			const capture = !!o.capture;
			const signal = o.signal;
			if (signal !== undefined && !(signal instanceof AbortSignal)) {
				throw new TypeError('The "options.signal" property must be an instance of AbortSignal');
			}
			if (signal && signal.aborted) return;
			type = String(type);
			let list = all.get(type);
			if (!list) all.set(type, list = []);
			if (list.some((e) => e.listener === listener && e.capture === capture)) return;
			const entry = {listener, capture, once: !!o.once, passive: !!o.passive, removed: false};
			list.push(entry);
			if (signal) {
				signal.addEventListener("abort", () => this.removeEventListener(type, listener, {capture}), {once: true});
			}
		}
		removeEventListener(type, listener, options = undefined) {
			const list = listeners(this).get(String(type));
			if (!list) return;
			const capture = !!flags(options).capture;
			const i = list.findIndex((e) => e.listener === listener && e.capture === capture);
			if (i >= 0) {
				list[i].removed = true;
				list.splice(i, 1);
			}
		}
		dispatchEvent(event) {
			if (!(event instanceof Event)) {
				throw new TypeError('The "event" argument must be an instance of Event. Received ' + typeof event);
			}
			const s = ev(event);
			if (s.dispatching) throw new DOMException("The event is already being dispatched", "InvalidStateError");
			const list = (listeners(this).get(s.type) || []).slice();
			s.dispatching = true;
			s.target = this;
			s.currentTarget = this;
			s.eventPhase = 2;
			try {
				for (const e of list) {
					if (e.removed) continue;
					if (e.once) this.removeEventListener(s.type, e.listener, {capture: e.capture});
					s.passive = e.passive;
					try {
						if (typeof e.listener === "function") {
							e.listener.call(this, event);
						} else if (e.listener && typeof e.listener.handleEvent === "function") {
							e.listener.handleEvent(event);
						}
					} catch (err) {
						natives.report(err);
					}
					s.passive = false;
					if (s.stopImmediate) break;
				}
			} finally {
				s.dispatching = false;
				s.currentTarget = null;
				s.eventPhase = 0;
			}
			return !s.defaultPrevented;
		}
	}
	defineProperty(EventTarget.prototype, Symbol.toStringTag, {value: "EventTarget", configurable: true});

	const signals = new WeakMap();
	const {addEventListener} = EventTarget.prototype;
	let constructing = false;
	function sig(t) {
		const s = signals.get(t);
		if (!s) throw new TypeError("Value of \"this\" must be of type AbortSignal");
		return s;
	}
	function newSignal() {
		constructing = true;
		try {
			return new AbortSignal();
		} finally {
			constructing = false;
		}
	}
	function abortSignal(signal, reason) {
		const s = sig(signal);
		if (s.aborted) return;
		s.aborted = true;
		s.reason = reason === undefined ? new DOMException("This operation was aborted", "AbortError") : reason;
		const dependents = s.dependents;
		s.dependents = [];
		signal.dispatchEvent(new Event("abort"));
		for (const d of dependents) abortSignal(d, s.reason);
	}
	class AbortSignal extends EventTarget {
		constructor() {
			if (!constructing) throw new TypeError("Illegal constructor");
			super();
			signals.set(this, {aborted: false, reason: undefined, onabort: null, handler: null, dependents: []});
		}
		get aborted() { return sig(this).aborted; }
		get reason() { return sig(this).reason; }
		get onabort() { return sig(this).onabort; }
		// An event handler attribute, as Node has it: the first handler set becomes a listener
		// at that point of the listener list, and every later one (null too) takes its place.
		set onabort(f) {
			const s = sig(this);
			s.onabort = typeof f === "function" ? f : null;
			if (s.onabort !== null && !s.handler) {
				const signal = this;
				s.handler = (event) => {
					if (typeof s.onabort === "function") s.onabort.call(signal, event);
				};
				addEventListener.call(this, "abort", s.handler);
			}
		}
		throwIfAborted() {
			const s = sig(this);
			if (s.aborted) throw s.reason;
		}
		static abort(reason = undefined) {
			const signal = newSignal();
			abortSignal(signal, reason);
			return signal;
		}
		static timeout(ms) {
			const n = Number(ms);
			if (!Number.isFinite(n) || n < 0) {
				throw new RangeError('The value of "delay" is out of range. It must be >= 0 && <= 4294967295. Received ' + String(ms));
			}
			const signal = newSignal();
			natives.setTimeout(() => abortSignal(signal, new DOMException("The operation was aborted due to timeout", "TimeoutError")), n);
			return signal;
		}
		static any(signalList) {
			const list = Array.from(signalList);
			for (const s of list) {
				if (!(s instanceof AbortSignal)) throw new TypeError('The "signals" argument must be an instance of AbortSignal');
			}
			const signal = newSignal();
			const aborted = list.find((s) => s.aborted);
			if (aborted) {
				abortSignal(signal, aborted.reason);
				return signal;
			}
			for (const s of list) sig(s).dependents.push(signal);
			return signal;
		}
	}
	defineProperty(AbortSignal.prototype, Symbol.toStringTag, {value: "AbortSignal", configurable: true});
	const controllers = new WeakMap();
	class AbortController {
		constructor() {
			controllers.set(this, newSignal());
		}
		get signal() {
			const s = controllers.get(this);
			if (!s) throw new TypeError("Value of \"this\" must be of type AbortController");
			return s;
		}
		abort(reason = undefined) {
			abortSignal(this.signal, reason);
		}
	}
	defineProperty(AbortController.prototype, Symbol.toStringTag, {value: "AbortController", configurable: true});
	return {DOMException, Event, CustomEvent, EventTarget, AbortController, AbortSignal};
})
