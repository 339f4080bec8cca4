// expect: runtime
// A thrown Proxy whose every trap throws: describing it must not fail the host.
throw new Proxy({}, {
  get() { throw new Error("get trap"); },
  getPrototypeOf() { throw new Error("getPrototypeOf trap"); },
  ownKeys() { throw new Error("ownKeys trap"); },
  has() { throw new Error("has trap"); },
  getOwnPropertyDescriptor() { throw new Error("descriptor trap"); },
});
