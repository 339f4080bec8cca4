// expect: ok
// goja follows a sourceMappingURL comment to a file on disk; a stack trace naming
// LEAKED_SOURCE_MAP.js would prove the file was read. (The suite puts the absolute path of
// sandbox/testdata/sourcemap/leak.map in place of LEAK_MAP.)
const stacks = [new Error("program").stack];
try {
  eval("throw new Error('eval')\n//# sourceMappingURL={{LEAK_MAP}}");
} catch (e) {
  stacks.push(e.stack);
}
try {
  new Function("throw new Error('function')\n//# sourceMappingURL={{LEAK_MAP}}")();
} catch (e) {
  stacks.push(e.stack);
}
for (const s of stacks) {
  if (String(s).includes("LEAKED_SOURCE_MAP")) throw new Error("a source map was read from disk: " + s);
}
return "not read";
//# sourceMappingURL={{LEAK_MAP}}
