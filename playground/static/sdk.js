// SDK sizes for the playground: the bytes of a generated SDK text that
// belong to each tool, and a token estimate.
"use strict";
(function (root) {
  const encoder = new TextEncoder();

  // bytes is the UTF-8 size of a string.
  function bytes(text) {
    return encoder.encode(text).length;
  }

  // tokens estimates a token count as bytes / 4 (rounded up): a rough rule
  // of thumb for English text and code; real tokenizers differ.
  function tokens(n) {
    return Math.ceil(n / 4);
  }

  // A member line of the generated declarations: a tool's entry in
  // ToolArgsMap or ToolOutputMap ("  name: {" or "  name: Record<…>;") or its
  // method in `declare const tools` ("  name(args…"). Names that are not
  // identifiers are quoted.
  const memberRe = /^ {2}("(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$]*)\??\s*[:(]/;

  // perTool attributes the lines of an SDK text (the TypeScript
  // declarations, or the prompt, which embeds them) to tools: each tool's
  // entries in ToolArgsMap and ToolOutputMap and its method in `tools` with
  // the doc comment above it. It returns {tools: Map name → bytes, shared,
  // total}: shared is everything else (the header, ToolCallError, the
  // instructions of the prompt), so the parts add up to total.
  function perTool(text) {
    const sizes = new Map();
    const add = (name, n) => sizes.set(name, (sizes.get(name) || 0) + n);
    const lines = text.split("\n");
    let inSection = false; // inside ToolArgsMap, ToolOutputMap or `tools`
    let entry = null; // the tool whose multi-line entry is open
    let doc = 0; // bytes of a doc comment waiting for its member
    let inDoc = false;
    let attributed = 0;
    lines.forEach((line, i) => {
      const n = bytes(line) + (i < lines.length - 1 ? 1 : 0);
      if (!inSection) {
        if (/^(?:interface Tool(?:Args|Output)Map\b|declare const tools\b)/.test(line)) inSection = true;
        return;
      }
      if (/^\}/.test(line)) {
        inSection = false;
        entry = null;
        doc = 0;
        inDoc = false;
        return;
      }
      if (entry !== null) {
        add(entry, n);
        attributed += n;
        if (/^ {2}\}/.test(line)) entry = null;
        return;
      }
      if (inDoc || /^ {2}\/\*\*/.test(line)) {
        inDoc = !line.includes("*/");
        doc += n;
        return;
      }
      const m = memberRe.exec(line);
      if (!m) {
        doc = 0;
        return;
      }
      const name = m[1][0] === '"' ? JSON.parse(m[1]) : m[1];
      add(name, n + doc);
      attributed += n + doc;
      doc = 0;
      if (/\{\s*$/.test(line)) entry = name;
    });
    const total = bytes(text);
    return { tools: sizes, shared: total - attributed, total };
  }

  // nativeBytes is the size of a tool's definition as a model is offered it
  // natively: its name, description and parameter schema as compact JSON.
  function nativeBytes(tool) {
    return bytes(JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }));
  }

  root.PlaygroundSDK = { bytes, tokens, perTool, nativeBytes };
})(globalThis);
