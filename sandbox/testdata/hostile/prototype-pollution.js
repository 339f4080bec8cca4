// expect: ok
// check: clean
// Pollutes every shared prototype it can reach; the next run must not see any of it.
Object.prototype.polluted = "yes";
Object.defineProperty(Object.prototype, "toJSON", { value: () => "hijacked", configurable: true });
Array.prototype.push = function () { return -1; };
Array.prototype[Symbol.iterator] = function* () { yield "hijacked"; };
String.prototype.repeat = () => "hijacked";
Function.prototype.call = () => "hijacked";
Promise.prototype.then = function () { return "hijacked"; };
JSON.parse = () => "hijacked";
Math.random = () => 4;
Error.prototype.toString = () => "hijacked";
Object.freeze(Object.prototype);
return "polluted";
