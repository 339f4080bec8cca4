// record.mjs evaluates every expression of cases.txt in Node (the oracle: Node 24 with full
// ICU) and writes what each gives to expected.json, which intl_test.go compares with what
// the same expressions give in goja with package intl installed:
//
//	node sandbox/intl/testdata/record.mjs
//
// cases.txt: one JavaScript expression a line; blank lines and lines starting with # are
// skipped. A line may end with "  ## known: <reason>" to mark a difference from Node that
// is accepted (the test then only checks that the expression runs without crashing, and
// fails if the difference has gone). prelude.js is evaluated before each expression, in
// both engines.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';

process.env.TZ = 'UTC';
const here = path.dirname(new URL(import.meta.url).pathname);
const prelude = fs.readFileSync(path.join(here, 'prelude.js'), 'utf8');
const lines = fs.readFileSync(path.join(here, 'cases.txt'), 'utf8').split('\n');

if (new Intl.NumberFormat().resolvedOptions().locale !== 'en-US') {
  console.error('record.mjs: Node\'s default locale must be en-US (run with LANG=en_US.UTF-8)');
  process.exit(1);
}

const out = [];
const seen = new Set();
for (const raw of lines) {
  const line = raw.trim();
  if (!line || line.startsWith('#')) continue;
  const [expr] = line.split('  ## known:');
  if (seen.has(expr.trim())) {
    console.error(`duplicate case: ${expr}`);
    process.exit(1);
  }
  seen.add(expr.trim());
  const ctx = vm.createContext({});
  let result;
  try {
    result = { value: vm.runInContext(`${prelude}\n__show(${expr.trim()})`, ctx) };
  } catch (e) {
    result = { error: e && e.name ? e.name : String(e), message: e && e.message };
  }
  out.push({ expr: expr.trim(), ...result });
}
fs.writeFileSync(path.join(here, 'expected.json'), JSON.stringify({
  node: process.version, icu: process.versions.icu, cldr: process.versions.cldr, cases: out,
}, null, 1) + '\n');
console.log(`recorded ${out.length} cases with Node ${process.version} (ICU ${process.versions.icu}, CLDR ${process.versions.cldr})`);
