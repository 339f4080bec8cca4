// expect: timeout
// The loop starts after the first await, inside a microtask.
await null;
while (true) {}
