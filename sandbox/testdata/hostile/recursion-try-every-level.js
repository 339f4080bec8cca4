// expect: ok
// A try at every level of a runaway recursion: each call in a try is a point where Go calls
// into JavaScript, so Go frames nest as deep as the call stack; the overflow is caught at the
// deepest level and the recursion unwinds normally.
function deep(n) {
  try {
    return deep(n + 1);
  } catch (e) {
    return n;
  }
}
const n = deep(0);
if (n < 4000) throw new Error("caught too early: " + n);
return n;
