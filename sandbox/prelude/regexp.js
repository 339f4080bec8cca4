// The program's RegExp: goja's, wrapped so that patterns with syntax goja lacks (\p{…}, the
// v and d flags) are translated (natives.translate) and the objects made from them report
// the source and flags the program wrote and, with d, match indices (natives.indices).
(function (natives) {
	"use strict";
	const NativeRegExp = RegExp;
	const proto = NativeRegExp.prototype;
	const nativeExec = proto.exec;
	const translated = new WeakMap(); // regexp → {source, flags, pattern, gojaFlags}
	const order = "dgimsuvy";
	const canonical = (flags) => [...flags].sort((a, b) => order.indexOf(a) - order.indexOf(b)).join("");

	// source as V8 escapes it (EscapeRegExpPattern): "/" outside a class as "\/", line
	// terminators as \n, \r, \u2028, \u2029. goja writes "/" as "\u002f", inside classes too,
	// so the source of every regexp made here is kept and escaped here.
	const sources = new WeakMap(); // regexp → the source the program gave
	const terminators = {"\n": "\\n", "\r": "\\r", "\u2028": "\\u2028", "\u2029": "\\u2029"};
	function escapeSource(src) {
		let out = "", inClass = false;
		for (let i = 0; i < src.length; i++) {
			const c = src[i];
			if (c === "\\" && i + 1 < src.length) {
				const n = src[++i];
				out += terminators[n] || c + n;
				continue;
			}
			if (c === "[") inClass = true;
			else if (c === "]") inClass = false;
			else if (c === "/" && !inClass) {
				out += "\\/";
				continue;
			}
			out += terminators[c] || c;
		}
		return out;
	}
	const nativeSource = Object.getOwnPropertyDescriptor(proto, "source").get;
	const sourceOf = {
		get source() {
			const src = sources.get(this);
			return src === undefined ? nativeSource.call(this) : escapeSource(src);
		},
		toString() {
			if (this === null || (typeof this !== "object" && typeof this !== "function")) {
				throw new TypeError("RegExp.prototype.toString requires that 'this' be an Object");
			}
			return "/" + String(this.source) + "/" + String(this.flags);
		},
	};
	Object.defineProperty(proto, "source", {get: Object.getOwnPropertyDescriptor(sourceOf, "source").get, configurable: true});
	Object.defineProperty(proto, "toString", {value: sourceOf.toString, writable: true, configurable: true});

	const Translated = Object.create(proto);
	const getters = {
		get source() { return escapeSource(translated.get(this).source); },
		get flags() { return translated.get(this).flags; },
		get hasIndices() { return translated.get(this).flags.includes("d"); },
		get unicodeSets() { return translated.get(this).flags.includes("v"); },
		get unicode() { return translated.get(this).flags.includes("u"); },
	};
	for (const name of Object.keys(getters)) {
		Object.defineProperty(Translated, name, Object.assign(Object.getOwnPropertyDescriptor(getters, name), {enumerable: false}));
	}
	const methods = {
		exec(string) {
			const t = translated.get(this);
			const m = nativeExec.call(this, string);
			if (m === null || !t || !t.flags.includes("d")) return m;
			const found = natives.indices(t.pattern, t.gojaFlags, String(string), m.index);
			if (found !== null) {
				const [pairs, names] = found;
				const indices = pairs.slice();
				let groups;
				names.forEach((name, i) => {
					if (name !== "" && !/^\d+$/.test(name)) {
						if (groups === undefined) groups = Object.create(null);
						groups[name] = pairs[i];
					}
				});
				indices.groups = groups;
				Object.defineProperty(m, "indices", {value: indices, writable: true, enumerable: true, configurable: true});
			}
			return m;
		},
	};
	Object.defineProperty(Translated, "exec", {value: methods.exec, writable: true, configurable: true});
	for (const name of ["hasIndices", "unicodeSets"]) {
		if (!(name in proto)) {
			Object.defineProperty(proto, name, {get: {[name]() { return false; }}[name], configurable: true});
		}
	}

	function isRegExp(v) {
		return v !== null && typeof v === "object" && Object.prototype.toString.call(v) === "[object RegExp]";
	}
	function make(args, newTarget) {
		let pattern = args[0], flags = args[1];
		const known = isRegExp(pattern) ? translated.get(pattern) : undefined;
		if (known) {
			if (flags === undefined) flags = known.flags;
			pattern = known.source;
		} else if (isRegExp(pattern)) {
			if (flags === undefined) flags = pattern.flags;
			pattern = pattern.source;
		}
		const source = pattern === undefined ? "(?:)" : String(pattern);
		const f = flags === undefined ? "" : String(flags);
		let t, re;
		try {
			t = natives.translate(source, f);
			if (t === null) {
				re = Reflect.construct(NativeRegExp, [pattern, flags], newTarget);
				if (source !== "(?:)" && source !== "") sources.set(re, source);
				return re;
			}
			re = Reflect.construct(NativeRegExp, [t[0], t[1]], newTarget);
		} catch (e) {
			// In V8's words, "Invalid regular expression: /(/: Unterminated group", not Go's.
			if (e instanceof SyntaxError) throw new SyntaxError(natives.syntaxMessage(source, f, e.message));
			throw e;
		}
		translated.set(re, {source: source === "" ? "(?:)" : source, flags: canonical(f), pattern: t[0], gojaFlags: t[1]});
		if (Object.getPrototypeOf(re) === proto) Object.setPrototypeOf(re, Translated);
		return re;
	}
	const hasInstance = {[Symbol.hasInstance](v) { return v instanceof NativeRegExp; }}[Symbol.hasInstance];
	const Wrapped = new Proxy(NativeRegExp, {
		get(target, key, receiver) {
			if (key === Symbol.hasInstance) return hasInstance;
			return Reflect.get(target, key, receiver);
		},
		construct(target, args, newTarget) {
			return make(args, newTarget === Wrapped ? NativeRegExp : newTarget);
		},
		apply(target, thisArg, args) {
			if (isRegExp(args[0]) && args[1] === undefined && args[0].constructor === Wrapped) return args[0];
			return make(args, NativeRegExp);
		},
	});
	Object.defineProperty(proto, "constructor", {value: Wrapped, writable: true, configurable: true});
	Object.defineProperty(globalThis, "RegExp", {value: Wrapped, writable: true, configurable: true});
})
