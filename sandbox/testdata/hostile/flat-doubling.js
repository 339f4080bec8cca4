// expect: limit
// Thirty levels of an array that holds two references to the level below: 2**30 elements.
let a = [1];
for (let i = 0; i < 30; i++) a = [a, a];
return a.flat(30).length;
