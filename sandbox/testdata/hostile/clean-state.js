// expect: ok
// role: checker
// Run after every tampering program on the same runner: nothing a program did may be seen.
const problems = [];
const check = (ok, what) => { if (!ok) problems.push(what); };
check(({}).polluted === undefined, "Object.prototype is polluted");
check(!Object.isFrozen(Object.prototype), "Object.prototype is frozen");
check(JSON.stringify({ a: 1 }) === '{"a":1}', "toJSON is polluted");
const a = [1];
check(a.push(2) === 2, "Array.prototype.push is replaced");
check([...a].length === 2, "the array iterator is replaced");
check("ab".repeat(2) === "abab", "String.prototype.repeat is replaced");
check(Math.max.call(null, 1, 2) === 2, "Function.prototype.call is replaced");
check(JSON.parse('{"a":1}').a === 1, "JSON.parse is replaced");
check(Math.random() < 1, "Math.random is replaced");
check(String(new Error("e")) === "Error: e", "Error.prototype.toString is replaced");
check(typeof tools === "object" && tools !== null, "tools is missing");
check(typeof console === "object" && typeof console.log === "function", "console is missing");
check(typeof setTimeout === "function" && typeof clearTimeout === "function", "timers are missing");
check(typeof globalThis.leftBehind === "undefined" && typeof globalThis.declared === "undefined", "globals were left behind");
const toolsProto = Object.getPrototypeOf(tools);
check(toolsProto !== null && Object.getPrototypeOf(toolsProto) === null && Reflect.ownKeys(toolsProto).length === 2 && String(tools) === "[object Tools]", "tools has another prototype");
const r = await tools.math_add({ a: 1, b: 2 });
check(r.sum === 3, "math_add misbehaves");
let failed;
try { await tools.math_add({ a: 1n }); } catch (e) { failed = e; }
check(failed instanceof ToolCallError && failed.toolName === "math_add", "ToolCallError is broken");
await new Promise((resolve) => setTimeout(resolve, 1));
if (problems.length > 0) throw new Error("state leaked from an earlier run: " + problems.join("; "));
return "clean";
