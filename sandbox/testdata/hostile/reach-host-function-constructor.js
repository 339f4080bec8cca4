// expect: ok
// Every route to "the global object" leads to the program's own, which has only ECMAScript
// built-ins and the documented globals.
const routes = [
  (function () { return this; })(),
  (function () {}).constructor("return this")(),
  await (async function () {}).constructor("return this")(),
  (function* () {}).constructor("return this")().next().value,
  tools.math_add.constructor.constructor("return this")(),
  console.log.constructor("return this")(),
  setTimeout.constructor("return this")(),
  (0, eval)("this"),
  globalThis,
];
const allowed = new Set([
  // ECMAScript
  "globalThis", "Infinity", "NaN", "undefined", "eval", "isFinite", "isNaN", "parseFloat", "parseInt",
  "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "unescape",
  "AggregateError", "Array", "ArrayBuffer", "BigInt", "BigInt64Array", "BigUint64Array", "Boolean",
  "DataView", "Date", "Error", "EvalError", "FinalizationRegistry", "Float16Array", "Float32Array",
  "Float64Array", "Function", "Int8Array", "Int16Array", "Int32Array", "Iterator", "Map", "Number",
  "Object", "Promise", "Proxy", "RangeError", "ReferenceError", "RegExp", "Set", "SharedArrayBuffer",
  "String", "Symbol", "SyntaxError", "TypeError", "Uint8Array", "Uint8ClampedArray", "Uint16Array",
  "Uint32Array", "URIError", "WeakMap", "WeakRef", "WeakSet", "Atomics", "JSON", "Math", "Reflect", "Intl",
  // goja's own: the Error subclass it wraps Go errors in
  "GoError",
  // codemode
  "tools", "console", "ToolCallError", "setTimeout", "clearTimeout",
  // codemode's platform (README: What a program can use)
  "URL", "URLSearchParams", "setInterval", "clearInterval", "setImmediate", "clearImmediate",
  "queueMicrotask", "SuppressedError", "DisposableStack", "AsyncDisposableStack", "structuredClone",
  "TextEncoder", "TextDecoder", "atob", "btoa", "Event", "EventTarget", "CustomEvent", "AbortController",
  "AbortSignal", "DOMException", "crypto", "performance",
]);
for (const g of routes) {
  if (g !== globalThis) throw new Error("a second global object");
}
const extra = Object.getOwnPropertyNames(globalThis).filter((n) => !allowed.has(n));
if (extra.length > 0) throw new Error("undocumented globals: " + extra.join(", "));
return "one global object, nothing extra";
