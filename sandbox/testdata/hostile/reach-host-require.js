// expect: ok
// No ambient capability: no module system, process, file system, network or Node globals.
const names = ["require", "process", "module", "exports", "Buffer", "global", "fetch", "XMLHttpRequest",
  "WebSocket", "__dirname", "__filename", "Deno", "Bun", "importScripts",
  "os", "fs", "child_process", "navigator", "window", "self"];
const present = names.filter((n) => typeof globalThis[n] !== "undefined");
if (present.length > 0) throw new Error("ambient capabilities: " + present.join(", "));
let imported = false;
try { await eval('import("fs")'); imported = true; } catch (e) {}
if (imported) throw new Error("dynamic import worked");
return "isolated";
