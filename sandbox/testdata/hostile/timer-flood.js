// expect: limit
// More pending timers than a run may hold.
for (let i = 0; i < 20000; i++) setTimeout(() => {}, 1e9);
