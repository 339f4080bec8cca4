// expect: limit
// JSON.stringify walks a sparse array to its length, writing null for every hole.
const a = [];
a.length = 2 ** 32 - 1;
return JSON.stringify({ a }).length;
