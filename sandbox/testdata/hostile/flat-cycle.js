// expect: limit
// An array that contains itself, flattened to depth Infinity: goja recurses in Go until the
// stack overflows, which is fatal for the process.
const a = [1];
a.push(a);
return a.flat(Infinity).length;
