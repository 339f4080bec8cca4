// expect: ok
// The functions the sandbox hands in are opaque: no Go fields, methods or internals.
const own = (o) => Object.getOwnPropertyNames(o).sort().join(",");
const fns = { tool: tools.math_add, log: console.log, setTimeout, clearTimeout };
for (const [name, fn] of Object.entries(fns)) {
  if (own(fn) !== "length,name") throw new Error(name + " has properties " + own(fn));
  if (!String(fn).includes("[native code]")) throw new Error(name + " shows its source");
  if (Object.getPrototypeOf(fn) !== Function.prototype) throw new Error(name + " has an odd prototype");
}
if (tools.constructor !== undefined || tools.__proto__ !== undefined || tools.toString !== undefined) {
  throw new Error("tools inherits something");
}
const value = await tools.math_add({ a: 1, b: 2 });
if (Object.getPrototypeOf(value) !== Object.prototype || own(value) !== "sum") throw new Error("a settled value is not plain data");
const symbols = Object.getOwnPropertySymbols(globalThis).filter((s) => s !== Symbol.toStringTag).map(String);
if (symbols.length > 0) throw new Error("symbols on the global: " + symbols.join(", "));
return "opaque";
