// expect: limit
// An array made long by one element at a high index: forEach walks every hole natively.
const a = [];
a[2 ** 32 - 2] = 1;
let count = 0;
a.forEach(() => count++);
return count;
