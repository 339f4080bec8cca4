// expect: limit
// includes walks an array-like to its length in native code, calling no JavaScript at a
// hole: 2**53 steps, which no interrupt can stop.
return Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1);
