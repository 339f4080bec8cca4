// expect: limit
// A result made of many small parts.
return Array.from({ length: 1 << 16 }, (_, i) => ({ i, s: "abcdefghij".repeat(8) }));
