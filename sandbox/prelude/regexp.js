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

	const Translated = Object.create(proto);
	const getters = {
		get source() { return translated.get(this).source; },
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
			if (t === null) return Reflect.construct(NativeRegExp, [pattern, flags], newTarget);
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
