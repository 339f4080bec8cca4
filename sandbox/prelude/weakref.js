// WeakRef and FinalizationRegistry (ES2021). A run is short and its runtime is dropped at the
// end, so targets are held until then: deref() always answers the target, and cleanup
// callbacks never run, both of which the standard allows.
(function () {
	"use strict";
	function canBeHeldWeakly(v) {
		return (v !== null && (typeof v === "object" || typeof v === "function")) ||
			(typeof v === "symbol" && Symbol.keyFor(v) === undefined);
	}
	class WeakRef {
		#target;
		constructor(target) {
			if (!canBeHeldWeakly(target)) throw new TypeError("WeakRef: invalid target");
			this.#target = target;
		}
		deref() {
			return this.#target;
		}
	}
	Object.defineProperty(WeakRef.prototype, Symbol.toStringTag, {value: "WeakRef", configurable: true});
	class FinalizationRegistry {
		#cleanup;
		#cells = [];
		constructor(cleanupCallback) {
			if (typeof cleanupCallback !== "function") {
				throw new TypeError("FinalizationRegistry: cleanup must be callable");
			}
			this.#cleanup = cleanupCallback;
		}
		register(target, heldValue, unregisterToken = undefined) {
			if (!canBeHeldWeakly(target)) throw new TypeError("FinalizationRegistry.prototype.register: invalid target");
			if (Object.is(target, heldValue)) throw new TypeError("FinalizationRegistry.prototype.register: target and holdings must not be same");
			if (unregisterToken !== undefined && !canBeHeldWeakly(unregisterToken)) {
				throw new TypeError("FinalizationRegistry.prototype.register: invalid unregister token");
			}
			this.#cells.push({target, heldValue, unregisterToken});
		}
		unregister(unregisterToken) {
			if (!canBeHeldWeakly(unregisterToken)) throw new TypeError("Invalid unregisterToken ('" + String(unregisterToken) + "')");
			const before = this.#cells.length;
			this.#cells = this.#cells.filter((c) => c.unregisterToken !== unregisterToken);
			return this.#cells.length !== before;
		}
	}
	Object.defineProperty(FinalizationRegistry.prototype, Symbol.toStringTag, {value: "FinalizationRegistry", configurable: true});
	return {WeakRef, FinalizationRegistry};
})
