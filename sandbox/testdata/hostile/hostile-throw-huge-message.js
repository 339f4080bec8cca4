// expect: runtime
// A 4 Mi-character message is cut short in the failure.
throw new Error("m".repeat(1 << 22));
