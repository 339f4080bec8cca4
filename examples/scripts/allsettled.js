// Promise.allSettled keeps going when some calls fail, and reports each one.
const results = await Promise.allSettled([
  tools.math_add({ a: 1, b: 2 }),
  tools.util_fail({ message: "first failure" }),
  tools.util_echo({ value: [1, 2, 3] }),
])
return results.map((r) => (r.status === "fulfilled" ? { ok: r.value } : { error: r.reason.message }))
