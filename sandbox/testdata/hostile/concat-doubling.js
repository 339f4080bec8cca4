// expect: limit
// timeout: 30s
// memory: 64MiB
// serial
// inproc: skip (each doubling is one native step, so in process the string reaches
// gigabytes and seconds before the watchdog's failure takes effect; TestWatchdogStopsAGrowingRun
// covers the watchdog in process at a small limit)
// goja has no hook for string concatenation: the heap watchdog (and in a worker, the memory
// caps) stop a string doubled in a loop.
let s = "x".repeat(1 << 20);
for (;;) s += s;
