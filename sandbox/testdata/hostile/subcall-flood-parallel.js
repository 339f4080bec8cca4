// expect: limit
// 100,000 calls at once.
await Promise.all(Array.from({ length: 100000 }, (_, i) => tools.math_add({ a: i, b: 1 })));
