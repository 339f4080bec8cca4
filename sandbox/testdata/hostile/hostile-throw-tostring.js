// expect: runtime
// A thrown object whose toString, valueOf and message all throw.
throw {
  toString() { throw new Error("toString"); },
  valueOf() { throw new Error("valueOf"); },
  get message() { throw new Error("message"); },
  get name() { throw new Error("name"); },
};
