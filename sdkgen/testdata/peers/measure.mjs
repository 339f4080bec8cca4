// Measures what a model reads up front in code mode for one tool set, as three generators write
// it: ours (the text the Go test passes in), Cloudflare's (@cloudflare/codemode: its run-code
// tool description with generateTypesFromJsonSchema's declarations) and UTCP's
// (@utcp/code-mode: AGENT_PROMPT_TEMPLATE followed by getAllToolsTypeScriptInterfaces). The
// published packages run as they are; only their unused runtime imports are stubbed (stubs.mjs).
//
//	node measure.mjs input.json > result.json
//
// input.json: {"tools": [{name, description, parameters, output}], "ours": {"upfront": text,
// "empty": text, "alone": {name: text}}}: our up-front text for the set, for no tools and for
// each tool alone. Per-tool bytes are, for every
// generator alike, the size of its text for that tool alone minus its text for no tools.
import { readFileSync } from "node:fs";
import { register } from "node:module";
import { Tiktoken } from "js-tiktoken/lite";
import o200k from "js-tiktoken/ranks/o200k_base";

register("./stubs.mjs", import.meta.url);
const { generateTypesFromJsonSchema } = await import("@cloudflare/codemode");
// DEFAULT_DESCRIPTION is what createCodeTool (@cloudflare/codemode/ai) gives its tool when the
// caller sets no description; the package does not export it, so it is read from the chunk
// that defines it.
const { t: cloudflareDescription } = await import(
  new URL("node_modules/@cloudflare/codemode/dist/shared-SMjV5yN4.js", import.meta.url).href
);
const { CodeModeUtcpClient } = await import("@utcp/code-mode");

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const enc = new Tiktoken(o200k);
const bytes = (s) => Buffer.byteLength(s, "utf8");
const tokens = (s) => enc.encode(s).length;

const cloudflare = (tools) => {
  const descriptors = {};
  for (const t of tools) descriptors[t.name] = { description: t.description, inputSchema: t.parameters, outputSchema: t.output };
  return cloudflareDescription.replace("{{types}}", generateTypesFromJsonSchema(descriptors));
};

// UTCP names every tool <manual>.<tool>; the demo tools are one manual, "demo".
const utcp = async (tools) => {
  const client = Object.create(CodeModeUtcpClient.prototype);
  client.toolFunctionCache = new Map();
  client.getTools = async () =>
    tools.map((t) => ({ name: "demo." + t.name, description: t.description, inputs: t.parameters, outputs: t.output, tags: [] }));
  return CodeModeUtcpClient.AGENT_PROMPT_TEMPLATE + "\n\n" + (await client.getAllToolsTypeScriptInterfaces());
};

// facts counts, per tool, what of its schemas a text keeps: property descriptions, constraints
// (integer, minimum, maximum, minLength, maxLength, pattern) of the arguments, and a typed
// result (every property of the output schema named).
const facts = (tool, text) => {
  const out = { descriptions: [0, 0], constraints: [0, 0], results: [0, 0] };
  const count = (kind, kept) => {
    out[kind][1]++;
    if (kept) out[kind][0]++;
  };
  const walk = (schema) => {
    for (const p of Object.values(schema?.properties ?? {})) {
      if (typeof p.description === "string") count("descriptions", text.includes(p.description));
      if (p.type === "integer") count("constraints", /integer|\bint\b/.test(text));
      for (const kw of ["minimum", "maximum", "minLength", "maxLength"]) if (kw in p) count("constraints", text.includes(kw));
      if ("pattern" in p) count("constraints", text.includes(p.pattern));
    }
  };
  walk(tool.parameters);
  for (const p of Object.values(tool.output?.properties ?? {})) {
    if (typeof p.description === "string") count("descriptions", text.includes(p.description));
  }
  if (tool.output?.properties) count("results", Object.keys(tool.output.properties).every((k) => text.includes(k + ":") || text.includes(k + "?:")));
  return out;
};

const result = { native: {}, generators: [] };
const native = input.tools.map((t) => JSON.stringify({ name: t.name, description: t.description, parameters: t.parameters })).join("");
result.native = { bytes: bytes(native), tokens: tokens(native) };

// Each generator renders a tool list: ours comes rendered from the Go test, for the whole set,
// for no tools and for each tool alone.
const generators = [
  ["codemode", async (tools) => (tools.length === 0 ? input.ours.empty : tools.length === 1 ? input.ours.alone[tools[0].name] : input.ours.upfront)],
  ["cloudflare", async (tools) => cloudflare(tools)],
  ["utcp", utcp],
];
for (const [name, render] of generators) {
  const upfront = await render(input.tools);
  const empty = await render([]);
  const g = {
    name,
    bytes: bytes(upfront),
    tokens: tokens(upfront),
    shared: bytes(empty),
    sharedTokens: tokens(empty),
    perTool: {},
    facts: { descriptions: [0, 0], constraints: [0, 0], results: [0, 0] },
  };
  for (const tool of input.tools) {
    const alone = await render([tool]);
    g.perTool[tool.name] = bytes(alone) - g.shared;
    const f = facts(tool, alone);
    for (const k of Object.keys(f)) {
      g.facts[k][0] += f[k][0];
      g.facts[k][1] += f[k][1];
    }
  }
  result.generators.push(g);
}
process.stdout.write(JSON.stringify(result, null, 2) + "\n");
