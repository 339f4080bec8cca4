// URL and URLSearchParams (WHATWG URL Standard).
// natives: parse(input, base?) → record | null; set(href, component, value) → record;
// parseQuery(text) → [[name, value]…]; serializeQuery(pairs) → text.
// A record is [href, origin, protocol, username, password, host, hostname, port, pathname,
// search, hash].
(function (natives) {
	"use strict";
	const fields = ["href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"];
	const urls = new WeakMap(); // URL → {record, params}
	const lists = new WeakMap(); // URLSearchParams → {pairs, url}
	const str = (v) => {
		if (typeof v === "symbol") throw new TypeError("Cannot convert a Symbol value to a string");
		return String(v);
	};
	const invalid = (input) => {
		const e = new TypeError("Invalid URL");
		e.code = "ERR_INVALID_URL";
		e.input = input;
		return e;
	};
	const stateOf = (u) => {
		const s = urls.get(u);
		if (!s) throw new TypeError("Value of \"this\" must be of type URL");
		return s;
	};
	const listOf = (p) => {
		const s = lists.get(p);
		if (!s) throw new TypeError("Value of \"this\" must be of type URLSearchParams");
		return s;
	};
	const parse = (input, base) => {
		input = str(input);
		return base === undefined ? natives.parse(input) : natives.parse(input, str(base));
	};

	// The query of a URL follows its searchParams and back.
	function update(list) {
		if (!list.url) return;
		const s = urls.get(list.url);
		const text = natives.serializeQuery(list.pairs);
		s.record = natives.set(s.record[0], "search", text);
		if (text === "") s.record = natives.set(s.record[0], "search", "");
	}

	class URLSearchParams {
		constructor(init = "") {
			const list = {pairs: [], url: null};
			lists.set(this, list);
			if (init instanceof URLSearchParams) {
				list.pairs = listOf(init).pairs.map((p) => [p[0], p[1]]);
			} else if (init !== null && (typeof init === "object" || typeof init === "function")) {
				if (typeof init[Symbol.iterator] === "function") {
					for (const pair of init) {
						const p = Array.from(pair);
						if (p.length !== 2) throw new TypeError("Each query pair must be an iterable [name, value] tuple");
						list.pairs.push([str(p[0]), str(p[1])]);
					}
				} else {
					for (const key of Reflect.ownKeys(init)) {
						const d = Reflect.getOwnPropertyDescriptor(init, key);
						if (d && d.enumerable && typeof key === "string") list.pairs.push([key, str(init[key])]);
					}
				}
			} else {
				let text = str(init);
				if (text.startsWith("?")) text = text.slice(1);
				list.pairs = natives.parseQuery(text);
			}
		}
		get size() { return listOf(this).pairs.length; }
		append(name, value) {
			if (arguments.length < 2) throw new TypeError('The "name" and "value" arguments must be specified');
			const l = listOf(this);
			l.pairs.push([str(name), str(value)]);
			update(l);
		}
		delete(name, value) {
			const l = listOf(this);
			name = str(name);
			const v = value === undefined ? undefined : str(value);
			l.pairs = l.pairs.filter((p) => !(p[0] === name && (v === undefined || p[1] === v)));
			update(l);
		}
		get(name) {
			name = str(name);
			const p = listOf(this).pairs.find((p) => p[0] === name);
			return p ? p[1] : null;
		}
		getAll(name) {
			name = str(name);
			return listOf(this).pairs.filter((p) => p[0] === name).map((p) => p[1]);
		}
		has(name, value) {
			name = str(name);
			const v = value === undefined ? undefined : str(value);
			return listOf(this).pairs.some((p) => p[0] === name && (v === undefined || p[1] === v));
		}
		set(name, value) {
			if (arguments.length < 2) throw new TypeError('The "name" and "value" arguments must be specified');
			const l = listOf(this);
			name = str(name);
			value = str(value);
			const i = l.pairs.findIndex((p) => p[0] === name);
			if (i < 0) {
				l.pairs.push([name, value]);
			} else {
				l.pairs[i][1] = value;
				l.pairs = l.pairs.filter((p, j) => j <= i || p[0] !== name);
			}
			update(l);
		}
		sort() {
			const l = listOf(this);
			// Stable, by UTF-16 code units of the name.
			l.pairs = l.pairs.map((p, i) => [p, i]).sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1])).map((x) => x[0]);
			update(l);
		}
		*entries() { const l = listOf(this); for (let i = 0; i < l.pairs.length; i++) yield [l.pairs[i][0], l.pairs[i][1]]; }
		forEach(callback, thisArg) {
			if (typeof callback !== "function") throw new TypeError('The "callback" argument must be of type function');
			const l = listOf(this);
			for (let i = 0; i < l.pairs.length; i++) callback.call(thisArg, l.pairs[i][1], l.pairs[i][0], this);
		}
		*keys() { const l = listOf(this); for (let i = 0; i < l.pairs.length; i++) yield l.pairs[i][0]; }
		*values() { const l = listOf(this); for (let i = 0; i < l.pairs.length; i++) yield l.pairs[i][1]; }
		toString() { return natives.serializeQuery(listOf(this).pairs); }
	}
	Object.defineProperty(URLSearchParams.prototype, Symbol.iterator, {value: URLSearchParams.prototype.entries, writable: true, configurable: true});
	Object.defineProperty(URLSearchParams.prototype, Symbol.toStringTag, {value: "URLSearchParams", configurable: true});

	class URL {
		constructor(input, base) {
			if (arguments.length === 0) throw new TypeError('The "url" argument must be specified');
			const record = parse(input, base);
			if (record === null) throw invalid(str(input));
			const params = new URLSearchParams(record[9]);
			lists.get(params).url = this;
			urls.set(this, {record, params});
		}
		static canParse(input, base) {
			if (arguments.length === 0) throw new TypeError('The "url" argument must be specified');
			return parse(input, base) !== null;
		}
		static parse(input, base) {
			if (arguments.length === 0) throw new TypeError('The "url" argument must be specified');
			return parse(input, base) === null ? null : new URL(input, base);
		}
	}
	// The prototype's members in Node's order.
	const method = (name, fn) => Object.defineProperty(URL.prototype, name, {value: fn, writable: true, enumerable: true, configurable: true});
	method("toString", function toString() { return stateOf(this).record[0]; });
	fields.forEach((name, i) => {
		const d = {
			get() { return stateOf(this).record[i]; },
			enumerable: true,
			configurable: true,
		};
		if (name !== "origin") {
			d.set = function (value) {
				const s = stateOf(this);
				value = str(value);
				if (name === "href") {
					const record = natives.parse(value);
					if (record === null) throw invalid(value);
					s.record = record;
				} else {
					s.record = natives.set(s.record[0], name, value);
				}
				if (name === "href" || name === "search") lists.get(s.params).pairs = natives.parseQuery(s.record[9].slice(1));
			};
		}
		Object.defineProperty(URL.prototype, name, d);
		if (name === "search") {
			Object.defineProperty(URL.prototype, "searchParams", {get() { return stateOf(this).params; }, enumerable: true, configurable: true});
		}
	});
	method("toJSON", function toJSON() { return stateOf(this).record[0]; });
	Object.defineProperty(URL.prototype, Symbol.toStringTag, {value: "URL", configurable: true});
	for (const key of Object.getOwnPropertyNames(URLSearchParams.prototype)) {
		if (key !== "constructor") Object.defineProperty(URLSearchParams.prototype, key, {enumerable: true});
	}

	// For the console: the name-value pairs of a URLSearchParams, or undefined.
	const pairsOf = (p) => { const l = lists.get(p); return l ? l.pairs.map((x) => [x[0], x[1]]) : undefined; };
	return {URL, URLSearchParams, pairsOf};
});
