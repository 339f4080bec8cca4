// Chaining: feed one tool's value into the next. Values come back as data,
// so the program computes with them directly.
const first = await tools.math_add({ a: 2, b: 3 })
const second = await tools.math_add({ a: first.sum, b: 10 })
console.log(`2 + 3 = ${first.sum}; + 10 = ${second.sum}`)
return { sum: second.sum }
