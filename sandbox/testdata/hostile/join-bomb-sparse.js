// expect: limit
// The same through an array made long by assigning its length (the constructor guard does
// not see it; join's does).
const a = [];
a.length = 2 ** 32 - 1;
return a.join("-").length;
