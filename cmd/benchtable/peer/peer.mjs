// peer.mjs is the Node.js peer of the codemode benchmark harness (go run ./bench):
// the usual way JavaScript code-mode libraries run a model's program — a fresh
// vm context per run, the tools as host (outer-realm) async functions, the
// program an async function whose settled value is returned as JSON.
//
// It uses only Node's built-in modules (nothing to install); measure.mjs runs
// the programs and prints the timings.
//
//   node bench/peer/peer.mjs [iterations] [rounds]   (default 1000 × 5, after 200 warm-up runs)
import vm from 'node:vm';
import { measure } from './measure.mjs';

// The tool: an async host function returning {sum}, like the demo math_add.
const tools = Object.freeze({
  math_add: async ({ a, b }) => ({ sum: a + b }),
});

// A script is compiled once and run in a fresh context per run, as a
// library caching its compiled programs would.
function compile(body) {
  return new vm.Script(`(async function () {\n${body}\n})()`, { filename: 'program.js' });
}

async function runOnce(script) {
  const context = vm.createContext({ tools, console: { log() {} } });
  const value = await script.runInContext(context);
  return JSON.stringify(value === undefined ? null : value);
}

await measure('vm', compile, runOnce);
