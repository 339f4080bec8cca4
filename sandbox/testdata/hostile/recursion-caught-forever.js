// expect: timeout
// Catches the stack overflow (a RangeError, as in V8) and recurses again, forever: every
// overflow unwinds to the call in the try, and the run ends at its timeout.
function down(n) {
  return down(n + 1) + 1;
}
for (;;) {
  try {
    down(0);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
  }
}
