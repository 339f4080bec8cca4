// Unit tests of the page's scripts that need no browser: the line diff, the
// highlighter, the SDK size split (of the whole SDK and of catalogs) and the event-stream
// parser. Run by browser_test.go (TestScriptsInNode) with node's test runner:
//
//	node --test testdata/unit.mjs
//
// SDK_TS and SDK_PROMPT name files holding the demo tools' generated SDK; SDK_CATALOG and
// SDK_CATALOG_SOME catalog prompts of them (none and a few declared whole).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { runInThisContext } from "node:vm";

for (const f of ["diff.js", "highlight.js", "sdk.js", "sse.js"]) {
  const url = new URL("../static/" + f, import.meta.url);
  runInThisContext(readFileSync(url, "utf8"), { filename: url.pathname });
}
const { PlaygroundDiff: D, PlaygroundHighlight: H, PlaygroundSDK: S, PlaygroundSSE: E } = globalThis;

test("diff: unified output matches diff -u", () => {
  const cases = [
    {
      name: "one changed line",
      a: "- buy milk\n- call Bob\n",
      b: "- buy milk\n- call Alice\n",
      want: "--- a\n+++ b\n@@ -1,2 +1,2 @@\n - buy milk\n-- call Bob\n+- call Alice\n",
    },
    { name: "single lines", a: "call Bob\n", b: "call Alice\n", want: "--- a\n+++ b\n@@ -1 +1 @@\n-call Bob\n+call Alice\n" },
    { name: "from empty", a: "", b: "x\ny\n", want: "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n" },
    { name: "to empty", a: "x\ny\n", b: "", want: "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-x\n-y\n" },
    { name: "equal", a: "same\n", b: "same\n", want: "" },
    {
      // Two changes 11 lines apart: two hunks, as diff -u makes them.
      name: "separate hunks",
      a: lines(20),
      b: lines(20).replace("l2\n", "L2\n").replace("l15\n", "").replace("l19\n", "l19\nnew\n"),
      want:
        "--- a\n+++ b\n@@ -1,6 +1,6 @@\n l0\n l1\n-l2\n+L2\n l3\n l4\n l5\n" +
        "@@ -13,8 +13,8 @@\n l12\n l13\n l14\n-l15\n l16\n l17\n l18\n l19\n+new\n",
    },
    {
      // Changes 6 unchanged lines apart (twice the context) share a hunk.
      name: "merged hunk",
      a: lines(12),
      b: lines(12).replace("l2\n", "X\n").replace("l9\n", "Y\n"),
      want: "--- a\n+++ b\n@@ -1,12 +1,12 @@\n l0\n l1\n-l2\n+X\n l3\n l4\n l5\n l6\n l7\n l8\n-l9\n+Y\n l10\n l11\n",
    },
  ];
  for (const c of cases) assert.equal(D.unified("a", "b", c.a, c.b), c.want, c.name);
});

test("diff: the edit script is minimal and replays", () => {
  // Deterministic pseudo-random texts over a small alphabet: many matches.
  let seed = 7;
  const rnd = (n) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  for (let i = 0; i < 300; i++) {
    const a = Array.from({ length: rnd(12) }, () => "abc"[rnd(3)]);
    const b = Array.from({ length: rnd(12) }, () => "abc"[rnd(3)]);
    const ops = D.diffLines(a, b);
    assert.deepEqual(ops.filter((o) => o.op !== "+").map((o) => o.text), a, "old side replays");
    assert.deepEqual(ops.filter((o) => o.op !== "-").map((o) => o.text), b, "new side replays");
    const { added, removed } = D.stats(ops);
    assert.equal(added + removed, a.length + b.length - 2 * lcs(a, b), `minimal for ${a} → ${b}`);
  }
});

test("highlight: tokens cover the input and classify it", () => {
  const src = 'const a = await tools.math_add({ a: 2, b: 3 }) // add\nreturn { "sum": a.sum, s: `t${1}`, n: null }\n/* c */ interface X { y?: string }';
  const toks = H.code(src);
  assert.equal(toks.map((t) => t.text).join(""), src);
  const cls = (text) => toks.find((t) => t.text.trim() === text)?.cls;
  assert.equal(cls("const"), "tok-keyword");
  assert.equal(cls("math_add"), "tok-function");
  assert.equal(cls("// add"), "tok-comment");
  assert.equal(cls('"sum"'), "tok-property");
  assert.equal(cls("null"), "tok-literal");
  assert.equal(cls("X"), "tok-type");
  assert.equal(cls("string"), "tok-type");
  assert.equal(cls("/* c */"), "tok-comment");
  for (const odd of ['"unterminated\nnext', "`open", "/* open", "a / b / c", "1abc", "\u00e9\u4e2d\ud83d\ude00", ""]) {
    assert.equal(H.code(odd).map((t) => t.text).join(""), odd, JSON.stringify(odd));
  }
  const md = "# Title\n\n- item `code`\n\n```ts\nconst x = 1\n```\ntext";
  const mtoks = H.markdown(md);
  assert.equal(mtoks.map((t) => t.text).join(""), md);
  assert.ok(mtoks.some((t) => t.cls === "tok-heading" && t.text === "# Title"));
  assert.ok(mtoks.some((t) => t.cls === "tok-code" && t.text === "`code`"));
  assert.ok(mtoks.some((t) => t.cls === "tok-keyword" && t.text === "const"));
});

test("sdk: the parts per tool add up to the whole", () => {
  const demo = ["files_edit", "files_list", "files_read", "files_write", "kv_get", "kv_set", "math_add", "util_echo", "util_fail", "util_sleep", "util_swatch"];
  for (const name of ["SDK_TS", "SDK_PROMPT"]) {
    const text = readFileSync(process.env[name], "utf8");
    const parts = S.perTool(text);
    assert.equal(parts.total, Buffer.byteLength(text), name + " total");
    assert.deepEqual([...parts.tools.keys()].sort(), demo, name + " tools");
    const sum = [...parts.tools.values()].reduce((a, b) => a + b, 0);
    assert.equal(sum + parts.shared, parts.total, name + " parts add up");
    for (const [tool, n] of parts.tools) {
      // Each tool has a documented member with its argument and result types.
      assert.ok(n > 3 * tool.length, `${name} ${tool}: ${n} bytes`);
    }
  }
  const ts = 'declare const tools: {\n  /** Does it. */\n  "my-server.tool"(args: {\n    q: string;\n  }): Promise<{\n    r: number;\n  }>;\n  b(args?: X): Promise<Y>;\n};\ntype ToolName = keyof typeof tools;\n';
  const prompt = 'Text.\n```ts\ndeclare const tools: {\n/** Does it. */ "my-server.tool"(args: { q: string }): Promise<{ r: number }>;\nb(args?: X): Promise<Y>;\n};\n```\n';
  for (const quoted of [ts, prompt]) {
    const parts = S.perTool(quoted);
    assert.deepEqual([...parts.tools.keys()], ["my-server.tool", "b"]);
    assert.equal(parts.tools.get("my-server.tool") + parts.tools.get("b") + parts.shared, parts.total);
    assert.ok(parts.tools.get("my-server.tool") > parts.tools.get("b"));
  }
  assert.equal(S.perTool("declare const tools: {};\n").tools.size, 0);
  assert.equal(S.tokens(0), 0);
  assert.equal(S.tokens(9), 3);
  assert.equal(S.bytes("é"), 2);
});

test("sdk: a catalog prompt is told apart and still splits", () => {
  assert.ok(!S.isCatalog(readFileSync(process.env.SDK_PROMPT, "utf8")), "the whole SDK is not a catalog");
  const some = [];
  for (const name of ["SDK_CATALOG", "SDK_CATALOG_SOME"]) {
    const text = readFileSync(process.env[name], "utf8");
    assert.ok(S.isCatalog(text), name + " is a catalog");
    const parts = S.perTool(text);
    assert.equal(parts.total, Buffer.byteLength(text), name + " total");
    const sum = [...parts.tools.values()].reduce((a, b) => a + b, 0);
    assert.equal(sum + parts.shared, parts.total, name + " parts add up");
    // $search and $describe are the SDK's own members: shared, never a tool.
    assert.ok(![...parts.tools.keys()].some((n) => n.startsWith("$")), name + " tools: " + [...parts.tools.keys()]);
    assert.ok(parts.shared > 0);
    if (name === "SDK_CATALOG_SOME") some.push(...parts.tools.keys());
    else assert.equal(parts.tools.size, 0, name + " declares no tool whole");
  }
  // The larger catalog declares a few demo tools whole; each is one of them.
  const demo = new Set(S.members(readFileSync(process.env.SDK_TS, "utf8")).keys());
  assert.ok(some.length > 0 && some.length < demo.size, "whole declarations in the larger catalog: " + some);
  for (const n of some) assert.ok(demo.has(n), n + " is a demo tool");
});

test("sdk: members lists each tool's argument keys", () => {
  const m = S.members(readFileSync(process.env.SDK_TS, "utf8"));
  assert.deepEqual(m.get("math_add"), ["a", "b"]);
  assert.deepEqual(m.get("files_edit"), ["new", "old", "path"]);
  assert.deepEqual(m.get("files_list"), ["prefix"]);
  assert.ok(!m.has("run_code"));
  const exotic = S.members('declare const tools: {\n  "my-server.tool"(args: {\n    /** Q. */\n    q: string;\n    "a-b"?: {\n      deep: number;\n    };\n  }): Promise<void>;\n  b(): Promise<Y>;\n};\n');
  assert.deepEqual([...exotic.entries()], [["my-server.tool", ["q", "a-b"]], ["b", []]]);
});

test("sse: events parse however the stream is chunked", () => {
  const stream =
    ": session s1\n\nid: 1\nevent: tool/call\ndata: {\"seq\":1}\n\n: heartbeat\n\n" +
    "id: 2\r\nevent: tool/result\r\ndata: line one\r\ndata:line two\r\n\r\n" +
    "data: no id or type\rdata\r\r" +
    "id: 3\nevent: empty\n\n";
  const want = [
    { id: "1", event: "tool/call", data: '{"seq":1}' },
    { id: "2", event: "tool/result", data: "line one\nline two" },
    { id: "2", event: "message", data: "no id or type\n" },
  ];
  for (const size of [1, 2, 3, 7, 1000]) {
    const got = [];
    const push = E.parser((ev) => got.push(ev));
    for (let i = 0; i < stream.length; i += size) push(stream.slice(i, i + size));
    assert.deepEqual(got, want, "chunks of " + size);
  }
});

function lines(n) {
  return Array.from({ length: n }, (_, i) => "l" + i + "\n").join("");
}

function lcs(a, b) {
  const t = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) t[i][j] = a[i - 1] === b[j - 1] ? t[i - 1][j - 1] + 1 : Math.max(t[i - 1][j], t[i][j - 1]);
  }
  return t[a.length][b.length];
}
