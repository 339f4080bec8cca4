// expect: limit
// Formatting objects for the log is bounded too.
const o = { a: [1, 2, { b: "c" }], d: new Map([[1, 2]]) };
for (;;) console.error(o, o, o, [o, o]);
