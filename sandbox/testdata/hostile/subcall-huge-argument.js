// expect: runtime
// An argument over the size limit rejects that call and dispatches nothing.
await tools.math_add({ a: "x".repeat(5 << 20), b: 1 });
