// expect: timeout
// A loop in try and another in finally: the interrupt must not run the finally block.
try {
  while (1) {}
} finally {
  while (1) {}
}
