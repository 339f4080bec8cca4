// expect: limit
// 128 Mi characters in one native step (about 1 GiB in goja without the guard).
return "x".repeat(2 ** 27).length;
