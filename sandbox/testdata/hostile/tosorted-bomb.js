// expect: limit
// toSorted allocates a copy of the whole array-like before sorting it.
return Array.prototype.toSorted.call({ length: 2 ** 32 - 2 }).length;
