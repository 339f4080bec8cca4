// String.prototype.isWellFormed and toWellFormed (ES2024).
(function () {
	"use strict";
	function str(v, name) {
		if (v === null || v === undefined) {
			throw new TypeError("String.prototype." + name + " called on null or undefined");
		}
		return String(v);
	}
	// loneSurrogate is the index of the first lone surrogate in s at or after from, or -1.
	function loneSurrogate(s, from) {
		for (let i = from; i < s.length; i++) {
			const c = s.charCodeAt(i);
			if (c >= 0xd800 && c <= 0xdbff) {
				const d = s.charCodeAt(i + 1);
				if (d >= 0xdc00 && d <= 0xdfff) {
					i++;
					continue;
				}
				return i;
			}
			if (c >= 0xdc00 && c <= 0xdfff) return i;
		}
		return -1;
	}
	const methods = {
		isWellFormed() {
			return loneSurrogate(str(this, "isWellFormed"), 0) === -1;
		},
		toWellFormed() {
			const s = str(this, "toWellFormed");
			let out = "";
			let from = 0;
			for (let i = loneSurrogate(s, 0); i !== -1; i = loneSurrogate(s, from)) {
				out += s.slice(from, i) + "\ufffd";
				from = i + 1;
			}
			return from === 0 ? s : out + s.slice(from);
		},
	};
	for (const name of ["isWellFormed", "toWellFormed"]) {
		Object.defineProperty(String.prototype, name, {value: methods[name], writable: true, configurable: true});
	}
})
