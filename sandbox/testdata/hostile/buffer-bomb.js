// expect: limit
// 2 GiB in one allocation.
return new ArrayBuffer(2 ** 31).byteLength;
