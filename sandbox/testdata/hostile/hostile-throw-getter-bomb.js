// expect: runtime
// A thrown object whose getters build a new, larger object on every read.
function bomb(n) {
  const o = {};
  for (let i = 0; i < 8; i++) {
    Object.defineProperty(o, "k" + i, { enumerable: true, get: () => bomb(n + 1) });
  }
  return o;
}
throw bomb(0);
