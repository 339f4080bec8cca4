// expect: timeout
// Each microtask queues the next: the job queue never drains.
function again() {
  Promise.resolve().then(again);
}
again();
await new Promise(() => {});
