// expect: limit
// The same through a template literal, which reaches join without naming it.
const s = "x".repeat(1 << 23);
const parts = [s, s, s, s, s, s, s, s];
const all = [parts, parts, parts, parts, parts, parts, parts, parts];
return `${all}`.length;
