// Tools are a plain object: list them, test for one, call by computed name.
const names = Object.keys(tools)
console.log(`${names.length} tools, first ${names[0]}`)
const name = "math_add"
const viaIndex = await tools[name]({ a: 20, b: 22 })
return { hasEcho: "util_echo" in tools, hasNope: "nope" in tools, answer: viaIndex.sum }
