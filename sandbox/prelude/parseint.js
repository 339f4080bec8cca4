// parseInt (and Number.parseInt, the same function) keeping the sign of a negative zero, as
// V8 does: goja answers parseInt("-0") with +0.
(function () {
	"use strict";
	const original = parseInt;
	function space(c) {
		return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
			c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
	}
	const wrapped = {
		parseInt(string, radix) {
			const s = `${string}`;
			const n = original(s, radix);
			if (n !== 0) return n;
			let i = 0;
			while (i < s.length && space(s.charCodeAt(i))) i++;
			return s.charCodeAt(i) === 45 ? -0 : n;
		},
	}.parseInt;
	const described = {value: wrapped, writable: true, enumerable: false, configurable: true};
	Object.defineProperty(globalThis, "parseInt", described);
	if (Number.parseInt === original) Object.defineProperty(Number, "parseInt", described);
})
