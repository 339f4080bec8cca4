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

  // The first line of a tool's member in `declare const tools`: "  name(args…"
  // in the TypeScript declarations (its doc comment on the line above), or
  // "/** … */ name(args…" on one line in the prompt. Names that are not
  // identifiers are quoted.
  const memberRe = /^(?: {2})?(?:\/\*\*(?:[^*]|\*(?!\/))*\*\/ )?("(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$]*)\??\(/;

  // perTool attributes the lines of an SDK text (the TypeScript
  // declarations, or the prompt, which embeds them) to tools: each tool's
  // member in `declare const tools` (one line in the prompt; in the
  // declarations it runs to the line "  …;" that closes it) with the doc
  // comment above it. It returns {tools: Map name → bytes, shared, total}:
  // shared is everything else (ToolCallError, the derived maps, the
  // instructions of the prompt), so the parts add up to total.
  function perTool(text) {
    const sizes = new Map();
    const add = (name, n) => sizes.set(name, (sizes.get(name) || 0) + n);
    const lines = text.split("\n");
    let inSection = false; // inside `declare const tools`
    let entry = null; // the tool whose multi-line member is open
    let doc = 0; // bytes of a doc comment line waiting for its member
    let attributed = 0;
    lines.forEach((line, i) => {
      const n = bytes(line) + (i < lines.length - 1 ? 1 : 0);
      if (!inSection) {
        if (/^declare const tools\b/.test(line) && !/\};$/.test(line)) inSection = true;
        return;
      }
      if (/^\}/.test(line)) {
        inSection = false;
        entry = null;
        doc = 0;
        return;
      }
      if (entry !== null) {
        add(entry, n);
        attributed += n;
        if (/^ {2}\S.*;$/.test(line)) entry = null;
        return;
      }
      if (/^ {2}\/\*\*.*\*\/$/.test(line)) {
        doc += n;
        return;
      }
      const m = memberRe.exec(line);
      if (!m) {
        doc = 0;
        return;
      }
      const name = m[1][0] === '"' ? JSON.parse(m[1]) : m[1];
      if (name[0] === "$") {
        doc = 0; // $search and $describe: the SDK's own members, shared by every tool
        return;
      }
      add(name, n + doc);
      attributed += n + doc;
      doc = 0;
      if (!/;$/.test(line)) entry = name;
    });
    const total = bytes(text);
    return { tools: sizes, shared: total - attributed, total };
  }

  // nativeBytes is the size of a tool's definition as a model is offered it
  // natively: its name, description and parameter schema as compact JSON.
  function nativeBytes(tool) {
    return bytes(JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }));
  }

  // argKeyRe matches a property of a member's argument object in the
  // declarations: "    name?: type;" (quoted when not an identifier).
  const argKeyRe = /^ {4}("(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$]*)\??:/;

  // members reads the tools of the TypeScript declarations, for the
  // editor's completion: a Map from each tool's name to the property names
  // of its argument object (top level only), in declaration order.
  function members(text) {
    const out = new Map();
    let inSection = false;
    let entry = null; // the tool whose argument object is open
    for (const line of text.split("\n")) {
      if (!inSection) {
        if (/^declare const tools\b/.test(line) && !/\};$/.test(line)) inSection = true;
        continue;
      }
      if (/^\}/.test(line)) break;
      if (entry !== null) {
        if (/^ {2}\S/.test(line)) {
          entry = null; // the argument object closed: "  }): Promise<…"
          continue;
        }
        const m = argKeyRe.exec(line);
        if (m) out.get(entry).push(m[1][0] === '"' ? JSON.parse(m[1]) : m[1]);
        continue;
      }
      const m = memberRe.exec(line);
      if (!m) continue;
      const name = m[1][0] === '"' ? JSON.parse(m[1]) : m[1];
      out.set(name, []);
      if (/\(args\??: \{$/.test(line)) entry = name;
    }
    return out;
  }

  // isCatalog reports whether a prompt is a catalog (the scope has too many tools to declare
  // them all: it names their groups and declares a few; the rest are found with
  // tools.$search), by the sentence only a catalog has, as sdkgen.IsCatalog does.
  function isCatalog(prompt) {
    return prompt.includes(" tools, too many to list here");
  }

  root.PlaygroundSDK = { bytes, tokens, perTool, nativeBytes, members, isCatalog };
})(globalThis);
