// expect: runtime
// A result nested past the depth data may cross the boundary with.
let a = [];
for (let i = 0; i < 20000; i++) a = [a];
return a;
