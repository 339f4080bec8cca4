// expect: limit
// 2 GiB of doubles in one allocation.
return new Float64Array(2 ** 28).length;
