// expect: limit
// join of many references to one long string: 64 times 8 Mi characters in one step.
const s = "x".repeat(1 << 23);
return Array(64).fill(s).join("").length;
