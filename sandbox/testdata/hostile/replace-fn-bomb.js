// expect: limit
// A replacement function returning long strings: counted as they come.
const s = "a".repeat(1 << 16);
const big = "b".repeat(1 << 16);
return s.replace(/a/g, () => big).length;
