// expect: limit
// new Set iterates its argument natively, as Array.from and Promise.all do.
const a = [];
a[2 ** 32 - 2] = 0;
return new Set(a).size;
