// expect: limit
// memory: 64MiB
// serial
// Many small allocations that all stay alive.
const keep = [];
for (;;) keep.push({ n: keep.length, items: [1, 2, 3, 4], text: "item " + keep.length });
