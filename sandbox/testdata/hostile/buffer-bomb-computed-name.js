// expect: limit
// inproc: skip (the constructor is reached under a computed name, which the in-process
// guards do not see; 1 TiB in one allocation is a fatal "out of memory" for the process)
const name = ["Array", "Buffer"].join("");
return new globalThis[name](2 ** 40).byteLength;
