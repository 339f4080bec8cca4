// expect: timeout
// A timer set far beyond the deadline keeps the program waiting until the timeout.
await new Promise((resolve) => setTimeout(resolve, 2 ** 31 - 1));
