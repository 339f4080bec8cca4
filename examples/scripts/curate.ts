// Curate: compute over many results inside the program and return only the
// summary, so the model reads a few lines instead of every intermediate value.
interface Row { n: number; square: number }
const rows: Row[] = []
for (let n = 1; n <= 20; n++) {
  const { sum } = await tools.math_add({ a: n * n, b: 0 })
  rows.push({ n, square: sum })
}
const even = rows.filter((r) => r.square % 2 === 0)
console.log(`computed ${rows.length} squares`)
return { count: even.length, largest: even[even.length - 1] }
