// expect: timeout
// The loop runs in a catch block: the interrupt is not an exception a catch could take.
try {
  throw new Error("first");
} catch (e) {
  for (;;) {}
}
