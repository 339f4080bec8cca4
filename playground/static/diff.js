// Line diffs for the playground: Myers' O(ND) algorithm over lines, and
// unified-diff hunks with context, in the format of `diff -u`.
"use strict";
(function (root) {
  // splitLines splits a text into lines; a final newline ends the last line
  // rather than starting an empty one.
  function splitLines(text) {
    if (text === "") return [];
    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    return lines;
  }

  // diffLines returns the edit script turning the lines of a into those of
  // b: a list of {op, text} where op is " " (kept), "-" (removed) or "+"
  // (added), in order. It is a shortest script (Myers), with the common
  // prefix and suffix taken out first.
  function diffLines(a, b) {
    let start = 0;
    while (start < a.length && start < b.length && a[start] === b[start]) start++;
    let endA = a.length;
    let endB = b.length;
    while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
      endA--;
      endB--;
    }
    const ops = [];
    for (let i = 0; i < start; i++) ops.push({ op: " ", text: a[i] });
    for (const o of myers(a.slice(start, endA), b.slice(start, endB))) ops.push(o);
    for (let i = endA; i < a.length; i++) ops.push({ op: " ", text: a[i] });
    return ops;
  }

  // myers is the greedy forward search of Myers (1986). Each round d keeps
  // the furthest x reached on every diagonal k = x - y; the rounds are kept
  // (only their live window, so memory is O(D²)) to walk the path back.
  function myers(a, b) {
    const n = a.length;
    const m = b.length;
    if (n === 0) return b.map((text) => ({ op: "+", text }));
    if (m === 0) return a.map((text) => ({ op: "-", text }));
    const max = n + m;
    const off = max + 1;
    const v = new Int32Array(2 * max + 3);
    const trace = [];
    for (let d = 0; d <= max; d++) {
      trace.push({ lo: off - d - 1, v: v.slice(off - d - 1, off + d + 2) });
      for (let k = -d; k <= d; k += 2) {
        let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
        let y = x - k;
        while (x < n && y < m && a[x] === b[y]) {
          x++;
          y++;
        }
        v[off + k] = x;
        if (x >= n && y >= m) return backtrack(trace, a, b, off);
      }
    }
    throw new Error("diff: no path found"); // unreachable: d = n + m always reaches the end
  }

  function backtrack(trace, a, b, off) {
    const ops = [];
    let x = a.length;
    let y = b.length;
    for (let d = trace.length - 1; d >= 0; d--) {
      const t = trace[d];
      const at = (k) => t.v[off + k - t.lo];
      const k = x - y;
      const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
      const prevX = at(prevK);
      const prevY = prevX - prevK;
      while (x > prevX && y > prevY) {
        ops.push({ op: " ", text: a[x - 1] });
        x--;
        y--;
      }
      if (d > 0) {
        if (x === prevX) ops.push({ op: "+", text: b[y - 1] });
        else ops.push({ op: "-", text: a[x - 1] });
      }
      x = prevX;
      y = prevY;
    }
    return ops.reverse();
  }

  // hunks groups an edit script into unified-diff hunks with `context`
  // unchanged lines around each change; changes at most twice the context
  // apart share a hunk. Each hunk is {oldStart, oldLines, newStart,
  // newLines, lines: [{op, text}]}, with starts numbered as `diff -u` does
  // (from 1; an empty side starts at the line before).
  function hunks(ops, context) {
    const ctx = context === undefined ? 3 : context;
    const out = [];
    let cur = null;
    let oldNo = 0;
    let newNo = 0;
    let lastChange = -Infinity;
    for (let i = 0; i < ops.length; i++) {
      const o = ops[i];
      if (o.op !== " ") {
        if (!cur || i - lastChange - 1 > 2 * ctx) {
          if (cur) trailingContext(cur, ops, lastChange, ctx);
          const from = Math.max(0, i - ctx);
          cur = { oldStart: 0, oldLines: 0, newStart: 0, newLines: 0, lines: [], oldFrom: oldNo - (i - from), newFrom: newNo - (i - from) };
          for (let j = from; j < i; j++) cur.lines.push(ops[j]);
          out.push(cur);
        } else {
          for (let j = lastChange + 1; j < i; j++) cur.lines.push(ops[j]);
        }
        cur.lines.push(o);
        lastChange = i;
      }
      if (o.op !== "+") oldNo++;
      if (o.op !== "-") newNo++;
    }
    if (cur) trailingContext(cur, ops, lastChange, ctx);
    for (const h of out) {
      h.oldLines = h.lines.filter((l) => l.op !== "+").length;
      h.newLines = h.lines.filter((l) => l.op !== "-").length;
      h.oldStart = h.oldLines === 0 ? h.oldFrom : h.oldFrom + 1;
      h.newStart = h.newLines === 0 ? h.newFrom : h.newFrom + 1;
      delete h.oldFrom;
      delete h.newFrom;
    }
    return out;
  }

  // trailingContext ends a hunk with up to ctx unchanged lines after its
  // last change.
  function trailingContext(h, ops, lastChange, ctx) {
    for (let j = lastChange + 1; j < ops.length && j <= lastChange + ctx; j++) h.lines.push(ops[j]);
  }

  function range(start, count) {
    return count === 1 ? String(start) : start + "," + count;
  }

  // unified renders the unified diff of two texts, "" when they are equal.
  function unified(oldName, newName, oldText, newText, context) {
    const hs = hunks(diffLines(splitLines(oldText), splitLines(newText)), context);
    if (hs.length === 0) return "";
    const out = ["--- " + oldName, "+++ " + newName];
    for (const h of hs) {
      out.push("@@ -" + range(h.oldStart, h.oldLines) + " +" + range(h.newStart, h.newLines) + " @@");
      for (const l of h.lines) out.push(l.op + l.text);
    }
    return out.join("\n") + "\n";
  }

  // stats counts the added and removed lines of an edit script.
  function stats(ops) {
    let added = 0;
    let removed = 0;
    for (const o of ops) {
      if (o.op === "+") added++;
      else if (o.op === "-") removed++;
    }
    return { added, removed };
  }

  root.PlaygroundDiff = { splitLines, diffLines, hunks, unified, stats };
})(globalThis);
