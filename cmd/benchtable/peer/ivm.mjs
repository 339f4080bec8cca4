// ivm.mjs is the isolated-vm peer of the benchmark harness: the same programs and
// output as peer.mjs, run the way code-mode libraries built on isolated-vm run a
// model's program (UTCP's code-mode among them) — a new isolate per run with a
// memory limit, a fresh context, the tools as host async functions reached through
// ivm.Reference (arguments and results copied across), the program an async
// function whose value is copied out.
//
// It needs the isolated-vm package: npm ci in this directory (.ci/node-deps).
//
//   node cmd/benchtable/peer/ivm.mjs [iterations] [rounds]   (default 1000 × 5, after 200 warm-up runs)
import ivm from 'isolated-vm';
import { createRequire } from 'node:module';
import { measure } from './measure.mjs';

const version = createRequire(import.meta.url)('isolated-vm/package.json').version;

// The host side of the tool, as in peer.mjs.
const mathAdd = new ivm.Reference(async ({ a, b }) => ({ sum: a + b }));

// Inside the isolate, tools.math_add calls the host function and awaits its copied result.
const prelude = `const tools = Object.freeze({
  math_add: (args) => __math_add.apply(undefined, [args], { arguments: { copy: true }, result: { promise: true, copy: true } }),
});`;

function compile(body) {
  return `${prelude}\n(async function () {\n${body}\n})()`;
}

async function runOnce(source) {
  const isolate = new ivm.Isolate({ memoryLimit: 128 });
  try {
    const context = await isolate.createContext();
    await context.global.set('__math_add', mathAdd);
    const script = await isolate.compileScript(source, { filename: 'program.js' });
    const value = await script.run(context, { promise: true, copy: true, timeout: 30000 });
    return JSON.stringify(value === undefined ? null : value);
  } finally {
    isolate.dispose();
  }
}

await measure(`isolated-vm ${version}`, compile, runOnce);
