// expect: limit
// Spread iterates natively: 4 billion holes become 64 GiB of values.
const a = [];
a[2 ** 32 - 2] = 0;
return [...a].length;
