// Independent calls run together: Promise.all starts them at once, and the
// concurrency-safe ones overlap (the log shows their start and end times).
const [a, b, c] = await Promise.all([
  tools.util_sleep({ ms: 50 }),
  tools.util_sleep({ ms: 50 }),
  tools.util_echo({ value: "done" }),
])
console.log(`slept ${a.slept_ms} and ${b.slept_ms} ms side by side`)
return { echoed: c.value, slept: a.slept_ms + b.slept_ms }
