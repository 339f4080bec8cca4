// String.prototype.isWellFormed and toWellFormed (ES2024).
(function () {
	"use strict";
	function str(v, name) {
		if (v === null || v === undefined) {
			throw new TypeError("String.prototype." + name + " called on null or undefined");
		}
		return String(v);
	}
	const methods = {
		isWellFormed() {
			const s = str(this, "isWellFormed");
			for (let i = 0; i < s.length; i++) {
				const c = s.charCodeAt(i);
				if (c >= 0xd800 && c <= 0xdbff) {
					const d = s.charCodeAt(i + 1);
					if (d >= 0xdc00 && d <= 0xdfff) {
						i++;
						continue;
					}
					return false;
				}
				if (c >= 0xdc00 && c <= 0xdfff) return false;
			}
			return true;
		},
		toWellFormed() {
			const s = str(this, "toWellFormed");
			let out = "";
			let from = 0;
			for (let i = 0; i < s.length; i++) {
				const c = s.charCodeAt(i);
				if (c >= 0xd800 && c <= 0xdbff) {
					const d = s.charCodeAt(i + 1);
					if (d >= 0xdc00 && d <= 0xdfff) {
						i++;
						continue;
					}
				} else if (c < 0xdc00 || c > 0xdfff) {
					continue;
				}
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
