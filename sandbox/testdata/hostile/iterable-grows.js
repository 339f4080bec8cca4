// expect: ok
// An iterable array-like whose length grows as it is read: spread would iterate forever.
let n = 0;
const o = { get length() { return ++n; }, [Symbol.iterator]: Array.prototype.values };
return [...o].length;
