// expect: limit
// Function.prototype.apply builds the argument list of an array-like in one allocation: 64 GiB
// for 2**32-1 elements.
return Math.max.apply(null, { length: 2 ** 32 - 1 });
