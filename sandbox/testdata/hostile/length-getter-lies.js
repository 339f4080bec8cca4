// expect: ok
// A length getter that answers small the first time and huge after: the guard reads it once
// and hands the built-in a view with that length.
let n = 0;
const o = { get length() { return n++ ? 2 ** 53 - 1 : 2; }, 1: "x" };
let m = 0;
const p = { get length() { return m++ ? 2 ** 53 - 1 : 0; } };
return [Array.prototype.includes.call(o, "x"), Array.prototype.indexOf.call(p, 1)];
