// Syntax highlighting for the playground: a small tokenizer for TypeScript,
// JavaScript and JSON, and a line-based one for the Markdown of the prompt
// (fenced code inside it is highlighted as TypeScript). Tokens are
// {cls, text} with cls "" for plain text; their texts concatenate back to
// the input exactly. Rendering builds text nodes, never HTML.
"use strict";
(function (root) {
  const keywords = new Set(
    ("abstract as async await break case catch class const continue debugger declare default delete do else enum export " +
      "extends finally for from function get if implements import in instanceof interface keyof let namespace new of " +
      "private protected public readonly return set static super switch this throw try type typeof var void while with yield")
      .split(" "),
  );
  const literals = new Set(["true", "false", "null", "undefined", "NaN", "Infinity"]);
  const builtinTypes = new Set(["string", "number", "boolean", "unknown", "any", "never", "object", "bigint", "symbol"]);

  // One alternative per token class, tried in order at each position. Strings
  // stop at the end of a line, so an unclosed quote spoils one line only.
  const tokenRe = new RegExp(
    [
      "(\\/\\/[^\\n]*|\\/\\*[\\s\\S]*?(?:\\*\\/|$))", // 1 comment
      "(\"(?:[^\"\\\\\\n]|\\\\.)*\"?|'(?:[^'\\\\\\n]|\\\\.)*'?|`(?:[^`\\\\]|\\\\[\\s\\S])*`?)", // 2 string
      "(\\b(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\\d[\\d_]*(?:\\.\\d[\\d_]*)?(?:[eE][+-]?\\d+)?)n?\\b)", // 3 number
      "([A-Za-z_$][\\w$]*)", // 4 identifier
      "(\\s+)", // 5 space
      "([^\\sA-Za-z0-9_$\"'`/]+|\\/)", // 6 punctuation
    ].join("|"),
    "y",
  );

  // code tokenizes TypeScript, JavaScript or JSON.
  function code(text) {
    const out = [];
    tokenRe.lastIndex = 0;
    let pos = 0;
    while (pos < text.length) {
      tokenRe.lastIndex = pos;
      const m = tokenRe.exec(text);
      if (!m || m[0] === "") {
        push(out, "", text[pos]);
        pos++;
        continue;
      }
      const t = m[0];
      let cls = "";
      if (m[1] !== undefined) cls = "tok-comment";
      else if (m[2] !== undefined) cls = followedByColon(text, pos + t.length) ? "tok-property" : "tok-string";
      else if (m[3] !== undefined) cls = "tok-number";
      else if (m[4] !== undefined) cls = identifierClass(text, pos, t);
      push(out, cls, t);
      pos += t.length;
    }
    return out;
  }

  function identifierClass(text, pos, word) {
    if (literals.has(word)) return "tok-literal";
    if (keywords.has(word)) return "tok-keyword";
    if (builtinTypes.has(word)) return "tok-type";
    if (/^[A-Z]/.test(word)) return "tok-type";
    if (nextNonSpace(text, pos + word.length) === "(") return "tok-function";
    if (followedByColon(text, pos + word.length) && /^\s*$/.test(lineBefore(text, pos))) return "tok-property";
    return "";
  }

  function nextNonSpace(text, i) {
    while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
    return text[i];
  }

  // followedByColon reports a ":" (optionally after "?") next, as after an
  // object key or a property declaration; "::" and "?." do not count.
  function followedByColon(text, i) {
    let c = nextNonSpace(text, i);
    if (c === "?") {
      i = text.indexOf("?", i) + 1;
      c = text[i];
    }
    return c === ":" && text[text.indexOf(":", i) + 1] !== ":";
  }

  function lineBefore(text, pos) {
    const start = text.lastIndexOf("\n", pos - 1) + 1;
    return text.slice(start, pos).replace(/[{,]/g, "");
  }

  function push(out, cls, text) {
    const last = out[out.length - 1];
    if (last && last.cls === cls) last.text += text;
    else out.push({ cls, text });
  }

  // markdown tokenizes the prompt text: headings, list bullets, inline code,
  // and fenced blocks (highlighted as code).
  function markdown(text) {
    const out = [];
    const lines = text.split("\n");
    let fence = null;
    let block = [];
    lines.forEach((line, i) => {
      const nl = i < lines.length - 1 ? "\n" : "";
      if (fence !== null) {
        if (/^\s*```\s*$/.test(line)) {
          for (const t of code(block.join(""))) push(out, t.cls, t.text);
          block = [];
          fence = null;
          push(out, "tok-fence", line + nl);
        } else {
          block.push(line + nl);
        }
        return;
      }
      const open = /^\s*```(\w*)\s*$/.exec(line);
      if (open) {
        fence = open[1];
        push(out, "tok-fence", line + nl);
        return;
      }
      if (/^#{1,6}\s/.test(line)) {
        push(out, "tok-heading", line);
        push(out, "", nl);
        return;
      }
      const bullet = /^(\s*)([-*]|\d+\.)(\s)/.exec(line);
      let rest = line;
      if (bullet) {
        push(out, "", bullet[1]);
        push(out, "tok-bullet", bullet[2]);
        push(out, "", bullet[3]);
        rest = line.slice(bullet[0].length);
      }
      inline(out, rest);
      push(out, "", nl);
    });
    if (fence !== null) for (const t of code(block.join(""))) push(out, t.cls, t.text);
    return out;
  }

  function inline(out, text) {
    const re = /`[^`\n]+`/g;
    let last = 0;
    let m;
    while ((m = re.exec(text)) !== null) {
      push(out, "", text.slice(last, m.index));
      push(out, "tok-code", m[0]);
      last = m.index + m[0].length;
    }
    push(out, "", text.slice(last));
  }

  // render replaces el's children with the tokens, as spans and text nodes.
  function render(el, tokens) {
    const doc = el.ownerDocument;
    const frag = doc.createDocumentFragment();
    for (const t of tokens) {
      if (t.text === "") continue;
      if (t.cls === "") {
        frag.appendChild(doc.createTextNode(t.text));
      } else {
        const span = doc.createElement("span");
        span.className = t.cls;
        span.textContent = t.text;
        frag.appendChild(span);
      }
    }
    el.replaceChildren(frag);
  }

  root.PlaygroundHighlight = { code, markdown, render };
})(globalThis);
