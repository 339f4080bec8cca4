// expect: ok
// check: clean
// The tools object is read-only: its bindings cannot be replaced or deleted. (A program can
// give it another prototype, in its own runtime only: the checker sees a fresh one.)
"use strict";
const attempts = [
  () => { tools.math_add = () => 0; },
  () => { delete tools.math_add; },
  () => { Object.defineProperty(tools, "math_add", { value: 1 }); },
  () => { Object.setPrototypeOf(tools, { polluted: true }); },
  () => { tools.__proto__ = { polluted: true }; },
];
for (const attempt of attempts) {
  try { attempt(); } catch (e) {}
}
if (typeof tools.math_add !== "function") throw new Error("tools.math_add was replaced");
if ((await tools.math_add({ a: 2, b: 2 })).sum !== 4) throw new Error("math_add misbehaves");
return "read-only";
