// State between calls (and between runs of one session): the key-value store.
await tools.kv_set({ key: "counter", value: 1 })
const before = await tools.kv_get({ key: "counter" })
await tools.kv_set({ key: "counter", value: before.value + 1 })
const after = await tools.kv_get({ key: "counter" })
const missing = await tools.kv_get({ key: "nope" })
return { counter: after.value, missingFound: missing.found }
