// This text is one expression: a function install(host). The sandbox evaluates it once per run,
// after its own setup and before the program, and calls it with a host object:
//
//   host.has(name)        true when name (a string) is a tool of this set; called on every lookup
//   host.names()          an array of the tool names, in order; called only to enumerate tools
//   host.call(name, args) starts a call with the program's argument value and returns a promise
//                         of the tool's value (or throws); any rejection or throw becomes a
//                         ToolCallError carrying name and the reason's message
//
// install defines two read-only globals and returns undefined:
//
//   ToolCallError  class ToolCallError extends Error: new ToolCallError(toolName, message),
//                  name "ToolCallError", own property toolName
//   tools          a proxy: tools.x is a function for a tool x (created on first use, then
//                  reused), undefined otherwise; `"x" in tools`, Object.keys(tools) and
//                  String(tools) work; tools cannot be modified. tools.x() with no argument
//                  passes {}.
//
// Nothing here depends on the number of tools: no per-tool work happens until a tool is used.
(function (host) {
  "use strict";

  var defineProperty = Object.defineProperty;
  var freeze = Object.freeze;
  var toPrimitive = Symbol.toPrimitive;

  class ToolCallError extends Error {
    constructor(toolName, message) {
      super(message);
      defineProperty(this, "toolName", { value: String(toolName), enumerable: true });
    }
  }
  defineProperty(ToolCallError.prototype, "name", { value: "ToolCallError" });
  freeze(ToolCallError.prototype);
  freeze(ToolCallError);

  function messageOf(reason) {
    try {
      if (typeof reason === "string") {
        return reason;
      }
      if (reason !== null && typeof reason === "object" && typeof reason.message === "string") {
        return reason.message;
      }
    } catch (e) {
      // A hostile reason (a throwing getter) says nothing usable.
    }
    return "tool call failed";
  }

  async function invoke(name, args) {
    try {
      return await host.call(name, args);
    } catch (reason) {
      if (reason instanceof ToolCallError) {
        throw reason;
      }
      throw new ToolCallError(name, messageOf(reason));
    }
  }

  var bindings = new Map();

  function binding(name) {
    var fn = bindings.get(name);
    if (fn === undefined) {
      fn = function (args) {
        return invoke(name, arguments.length === 0 ? {} : args);
      };
      defineProperty(fn, "name", { value: name });
      freeze(fn);
      bindings.set(name, fn);
    }
    return fn;
  }

  function isTool(key) {
    return typeof key === "string" && host.has(key) === true;
  }

  function describe() {
    return "[object Tools]";
  }

  function refuse() {
    return false;
  }

  var tools = new Proxy(Object.create(null), freeze({
    get: function (target, key) {
      if (key === toPrimitive) {
        return describe;
      }
      return isTool(key) ? binding(key) : undefined;
    },
    has: function (target, key) {
      return isTool(key);
    },
    ownKeys: function () {
      return Array.from(host.names());
    },
    getOwnPropertyDescriptor: function (target, key) {
      if (!isTool(key)) {
        return undefined;
      }
      return { value: binding(key), writable: false, enumerable: true, configurable: true };
    },
    set: refuse,
    defineProperty: refuse,
    deleteProperty: refuse,
    setPrototypeOf: refuse,
    preventExtensions: refuse,
  }));

  defineProperty(globalThis, "ToolCallError", { value: ToolCallError });
  defineProperty(globalThis, "tools", { value: tools });
})
