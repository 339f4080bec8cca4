// expect: timeout
// inproc: skip (goja's JSON.stringify is quadratic in the depth and runs natively: in process
// the abandoned goroutine would spin for a minute after the run ends)
let a = [];
for (let i = 0; i < 100000; i++) a = [a];
return JSON.stringify(a).length;
