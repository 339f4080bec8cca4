// expect: limit
// Tool calls one after another, forever: the call limit ends the run, uncatchably.
for (;;) {
  try {
    await tools.math_add({ a: 1, b: 2 });
  } catch (e) {}
}
