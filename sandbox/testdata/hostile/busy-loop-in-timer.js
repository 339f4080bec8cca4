// expect: timeout
// The loop runs in a setTimeout callback while the program waits for a timer that would
// fire long after the deadline.
setTimeout(() => { for (;;) {} }, 0);
await new Promise((resolve) => setTimeout(resolve, 1e9));
