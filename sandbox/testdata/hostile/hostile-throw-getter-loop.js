// expect: timeout
// Describing the thrown error runs its message getter, which never returns.
const e = new Error("x");
Object.defineProperty(e, "message", { get() { for (;;) {} } });
throw e;
