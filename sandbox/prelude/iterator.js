// The Iterator global and the iterator helpers of ES2025 on %IteratorPrototype%, which every
// built-in iterator (array, map, set, string, regexp matchAll, generators) inherits from.
(function () {
	"use strict";
	const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
	const defineProperty = Object.defineProperty;

	function direct(o, method) {
		if (o === null || (typeof o !== "object" && typeof o !== "function")) {
			throw new TypeError("Iterator.prototype." + method + " called on non-object");
		}
		return {iterator: o, next: o.next};
	}
	function step(rec) {
		const r = rec.next.call(rec.iterator);
		if (r === null || (typeof r !== "object" && typeof r !== "function")) {
			throw new TypeError("Iterator result " + String(r) + " is not an object");
		}
		return r;
	}
	function close(rec) {
		const ret = rec.iterator.return;
		if (ret !== undefined && ret !== null) ret.call(rec.iterator);
	}
	function callable(f, method) {
		if (typeof f !== "function") throw new TypeError(String(f) + " is not a function");
	}
	function limitOf(v) {
		const n = Number(v);
		if (Number.isNaN(n)) throw new RangeError(String(v) + " must be positive");
		const i = Math.trunc(n);
		if (i < 0) throw new RangeError(String(v) + " must be positive");
		return i;
	}

	// Iterator helper objects: next() runs the helper's step function; return() closes the
	// underlying iterator.
	const helpers = new WeakMap();
	const HelperPrototype = Object.create(IteratorPrototype);
	const helperMethods = {
		next() {
			const h = helpers.get(this);
			if (!h) throw new TypeError("Iterator Helper.prototype.next called on an incompatible receiver");
			if (h.done) return {value: undefined, done: true};
			if (h.running) throw new TypeError("Generator is already running");
			h.running = true;
			try {
				const r = h.step();
				if (r.done) h.done = true;
				return r;
			} catch (e) {
				h.done = true;
				throw e;
			} finally {
				h.running = false;
			}
		},
		return() {
			const h = helpers.get(this);
			if (!h) throw new TypeError("Iterator Helper.prototype.return called on an incompatible receiver");
			if (!h.done) {
				h.done = true;
				if (h.inner) close(h.inner);
				close(h.rec);
			}
			return {value: undefined, done: true};
		},
	};
	for (const name of ["next", "return"]) {
		defineProperty(HelperPrototype, name, {value: helperMethods[name], writable: true, configurable: true});
	}
	defineProperty(HelperPrototype, Symbol.toStringTag, {value: "Iterator Helper", configurable: true});
	function helper(rec, makeStep) {
		const h = {rec, done: false, running: false, inner: null};
		h.step = makeStep(h);
		const o = Object.create(HelperPrototype);
		helpers.set(o, h);
		return o;
	}
	const done = () => ({value: undefined, done: true});
	// firstMatch is the search of some, every and find: it calls predicate with each value of
	// rec and its index, and returns the iterator result of the first value predicate holds
	// for, after closing rec; undefined when rec ends first. A throw from predicate closes rec.
	function firstMatch(rec, predicate) {
		let counter = 0;
		for (;;) {
			const r = step(rec);
			if (r.done) return undefined;
			let hit;
			try { hit = predicate(r.value, counter++); } catch (e) { close(rec); throw e; }
			if (hit) { close(rec); return r; }
		}
	}

	const methods = {
		map(mapper) {
			const rec = direct(this, "map");
			callable(mapper);
			let counter = 0;
			return helper(rec, () => () => {
				const r = step(rec);
				if (r.done) return done();
				let v;
				try { v = mapper(r.value, counter++); } catch (e) { close(rec); throw e; }
				return {value: v, done: false};
			});
		},
		filter(predicate) {
			const rec = direct(this, "filter");
			callable(predicate);
			let counter = 0;
			return helper(rec, () => () => {
				for (;;) {
					const r = step(rec);
					if (r.done) return done();
					let keep;
					try { keep = predicate(r.value, counter++); } catch (e) { close(rec); throw e; }
					if (keep) return {value: r.value, done: false};
				}
			});
		},
		take(limit) {
			const rec = direct(this, "take");
			let remaining = limitOf(limit);
			return helper(rec, () => () => {
				if (remaining === 0) {
					close(rec);
					return done();
				}
				if (remaining !== Infinity) remaining--;
				const r = step(rec);
				return r.done ? done() : {value: r.value, done: false};
			});
		},
		drop(limit) {
			const rec = direct(this, "drop");
			let remaining = limitOf(limit);
			return helper(rec, () => () => {
				while (remaining > 0) {
					if (remaining !== Infinity) remaining--;
					if (step(rec).done) return done();
				}
				const r = step(rec);
				return r.done ? done() : {value: r.value, done: false};
			});
		},
		flatMap(mapper) {
			const rec = direct(this, "flatMap");
			callable(mapper);
			let counter = 0;
			return helper(rec, (h) => () => {
				for (;;) {
					if (h.inner) {
						let r;
						try { r = step(h.inner); } catch (e) { h.inner = null; close(rec); throw e; }
						if (!r.done) return {value: r.value, done: false};
						h.inner = null;
					}
					const r = step(rec);
					if (r.done) return done();
					try {
						h.inner = flattenable(mapper(r.value, counter++), false);
					} catch (e) { close(rec); throw e; }
				}
			});
		},
		reduce(reducer, ...initial) {
			const rec = direct(this, "reduce");
			callable(reducer);
			let acc, counter = 0;
			if (initial.length === 0) {
				const first = step(rec);
				if (first.done) throw new TypeError("Reduce of empty iterator with no initial value");
				acc = first.value;
				counter = 1;
			} else {
				acc = initial[0];
			}
			for (;;) {
				const r = step(rec);
				if (r.done) return acc;
				try { acc = reducer(acc, r.value, counter++); } catch (e) { close(rec); throw e; }
			}
		},
		toArray() {
			const rec = direct(this, "toArray");
			const out = [];
			for (;;) {
				const r = step(rec);
				if (r.done) return out;
				out.push(r.value);
			}
		},
		forEach(fn) {
			const rec = direct(this, "forEach");
			callable(fn);
			let counter = 0;
			for (;;) {
				const r = step(rec);
				if (r.done) return undefined;
				try { fn(r.value, counter++); } catch (e) { close(rec); throw e; }
			}
		},
		some(predicate) {
			const rec = direct(this, "some");
			callable(predicate);
			return firstMatch(rec, predicate) !== undefined;
		},
		every(predicate) {
			const rec = direct(this, "every");
			callable(predicate);
			return firstMatch(rec, (v, i) => !predicate(v, i)) === undefined;
		},
		find(predicate) {
			const rec = direct(this, "find");
			callable(predicate);
			const r = firstMatch(rec, predicate);
			return r === undefined ? undefined : r.value;
		},
	};

	// flattenable is GetIteratorFlattenable: an iterable's iterator, or an iterator itself.
	function flattenable(o, allowStrings) {
		if (typeof o === "string" ? !allowStrings : (o === null || (typeof o !== "object" && typeof o !== "function"))) {
			throw new TypeError(String(o) + " is not an iterator or iterable");
		}
		const method = o[Symbol.iterator];
		const it = method === undefined || method === null ? o : method.call(o);
		if (it === null || (typeof it !== "object" && typeof it !== "function")) {
			throw new TypeError(String(it) + " is not an object");
		}
		return {iterator: it, next: it.next};
	}

	const WrapPrototype = Object.create(IteratorPrototype);
	const wrapped = new WeakMap();
	const wrapMethods = {
		next() {
			const rec = wrapped.get(this);
			return rec.next.call(rec.iterator);
		},
		return() {
			const rec = wrapped.get(this);
			const ret = rec.iterator.return;
			if (ret === undefined || ret === null) return {value: undefined, done: true};
			return ret.call(rec.iterator);
		},
	};
	for (const name of ["next", "return"]) {
		defineProperty(WrapPrototype, name, {value: wrapMethods[name], writable: true, configurable: true});
	}

	function Iterator() {
		if (new.target === undefined || new.target === Iterator) {
			throw new TypeError("Abstract class Iterator not directly constructable");
		}
	}
	defineProperty(Iterator, "prototype", {value: IteratorPrototype, writable: false, enumerable: false, configurable: false});
	const statics = {
		from(o) {
			const rec = flattenable(o, true);
			if (rec.iterator instanceof Iterator) return rec.iterator;
			const w = Object.create(WrapPrototype);
			wrapped.set(w, rec);
			return w;
		},
	};
	defineProperty(Iterator, "from", {value: statics.from, writable: true, configurable: true});
	// constructor and @@toStringTag are accessors, as ES2025 has them (and V8, so that Node shows
	// an array iterator as Object [Array Iterator] {}): assigning either on an object that
	// inherits them makes an own property (SetterThatIgnoresPrototypeProperties).
	function accessor(key, value) {
		const setter = {
			set(v) {
				if (this === null || (typeof this !== "object" && typeof this !== "function")) {
					throw new TypeError("Iterator.prototype setter called on non-object");
				}
				if (this === IteratorPrototype) {
					throw new TypeError("Cannot assign to read only property '" + String(key) + "' of object '[object Iterator]'");
				}
				if (Object.getOwnPropertyDescriptor(this, key) === undefined) {
					defineProperty(this, key, {value: v, writable: true, enumerable: true, configurable: true});
				} else {
					this[key] = v;
				}
			},
		};
		const get = () => value;
		const label = typeof key === "symbol" ? "[Symbol.toStringTag]" : key;
		defineProperty(get, "name", {value: "get " + label, configurable: true});
		defineProperty(setter.set, "name", {value: "set " + label, configurable: true});
		defineProperty(IteratorPrototype, key, {get, set: setter.set, configurable: true});
	}
	accessor("constructor", Iterator);
	if (!(Symbol.toStringTag in IteratorPrototype)) {
		accessor(Symbol.toStringTag, "Iterator");
	}
	for (const name of Object.keys(methods)) {
		defineProperty(IteratorPrototype, name, {value: methods[name], writable: true, configurable: true});
	}
	return {Iterator};
})
