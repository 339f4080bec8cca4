// expect: ok
// check: clean
// Replaces and deletes the globals the sandbox provides; the next run must get them back.
globalThis.tools = null;
delete globalThis.console;
globalThis.setTimeout = () => { throw new Error("hijacked"); };
globalThis.clearTimeout = undefined;
globalThis.ToolCallError = function () { return "hijacked"; };
globalThis.Promise = function () {};
globalThis.leftBehind = { secret: 42 };
var declared = "also left behind";
return "tampered";
