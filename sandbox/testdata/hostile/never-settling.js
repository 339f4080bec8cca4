// expect: runtime
// A promise nothing can resolve: the run ends at once instead of at its timeout.
await new Promise(() => {});
