// The playground page: scope picker, SDK preview with sizes and changes,
// program editor and runs, nested-call timeline, and a live session view
// with approvals. It uses only the public /v1 API. Everything that comes
// from the server is rendered as text nodes, never as HTML.
"use strict";
(function () {
  const Diff = globalThis.PlaygroundDiff;
  const Hl = globalThis.PlaygroundHighlight;
  const Sdk = globalThis.PlaygroundSDK;
  const Sse = globalThis.PlaygroundSSE;

  const SDK_POLL_MS = 3000; // how often the SDK's ETag is checked
  const MAX_EVENT_ROWS = 500; // the events list keeps the latest ones
  const MAX_CHANGES = 10; // the SDK changes kept on the page
  const KEY_STORAGE = "codemode.playground.key";
  const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

  const $ = (id) => document.getElementById(id);

  const state = {
    key: "",
    scopes: [],
    scope: "default",
    mode: "",
    tools: [], // /v1/tools of the scope
    sdk: { ts: null, prompt: null }, // {etag, text} of each format
    format: "ts", // the SDK tab shown
    changes: [], // newest first: {time, from, to, diffs: {ts, prompt}, stats}
    gen: 0, // bumped on each scope change; stale async work checks it
    pollTimer: 0,
    session: null, // {id, scope}
    follow: null, // AbortController of the event stream
    events: [],
    lastSeq: 0,
    approvals: [],
    running: false,
    lastRun: null,
    exampleName: "",
  };

  // ---------------------------------------------------------------- DOM

  // h creates an element: props sets properties (className, textContent,
  // title, …), and attributes for "role" and keys with a dash (aria-*,
  // data-*; false leaves one out); children are nodes or strings.
  function h(tag, props, ...children) {
    const node = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (v === undefined || v === null) continue;
        if (k.includes("-") || k === "role") {
          if (v !== false) node.setAttribute(k, v === true ? "" : String(v));
        } else node[k] = v;
      }
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return node;
  }

  function codeBlock(text, kind, extraClass) {
    const code = h("code");
    Hl.render(code, kind === "markdown" ? Hl.markdown(text) : kind === "plain" ? [{ cls: "", text }] : Hl.code(text));
    return h("pre", { className: "code" + (extraClass ? " " + extraClass : "") }, code);
  }

  function jsonBlock(value) {
    return codeBlock(JSON.stringify(value, null, 2) ?? "undefined", "code");
  }

  // diffBlock renders a unified diff, line by line, with the +/- markers
  // kept so that the change does not depend on color alone.
  function diffBlock(text, label) {
    const pre = h("pre", { className: "diff", "aria-label": label || "diff" });
    for (const line of Diff.splitLines(text)) {
      let cls = "";
      if (line.startsWith("+++") || line.startsWith("---")) cls = "diff-file";
      else if (line.startsWith("@@")) cls = "diff-hunk";
      else if (line.startsWith("+")) cls = "diff-add";
      else if (line.startsWith("-")) cls = "diff-del";
      else if (line.startsWith("\\")) cls = "diff-note";
      pre.appendChild(h("span", { className: "diff-line " + cls, textContent: line + "\n" }));
    }
    return pre;
  }

  function badge(text, kind) {
    return h("span", { className: "badge " + kind, textContent: text });
  }

  function empty(text) {
    return h("p", { className: "empty", textContent: text });
  }

  const numberFormat = new Intl.NumberFormat("en-US");
  function fmtInt(n) {
    return numberFormat.format(n);
  }

  function fmtMs(ms) {
    if (ms < 1) return ms.toFixed(2) + " ms";
    if (ms < 100) return ms.toFixed(1) + " ms";
    if (ms < 1000) return Math.round(ms) + " ms";
    return (ms / 1000).toFixed(2) + " s";
  }

  function fmtClock(iso) {
    const d = new Date(timeMs(iso));
    return d.toLocaleTimeString("en-GB", { hour12: false }) + "." + String(d.getMilliseconds()).padStart(3, "0");
  }

  // timeMs parses an RFC 3339 time with any number of fractional digits to
  // milliseconds since the epoch, keeping the sub-millisecond part.
  function timeMs(iso) {
    const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(iso || "");
    if (!m) return Date.parse(iso);
    const frac = m[2] || "";
    return Date.parse(m[1] + "." + (frac + "000").slice(0, 3) + m[3]) + Number("0." + (frac.slice(3) || "0"));
  }

  function truncate(s, n) {
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  }

  function compactJSON(v) {
    try {
      return JSON.stringify(v);
    } catch {
      return String(v);
    }
  }

  function parseJSON(text) {
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  }

  // ---------------------------------------------------------------- API

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  function authHeaders() {
    return state.key ? { Authorization: "Bearer " + state.key } : {};
  }

  // api sends a request to the service and returns the response; an error
  // status becomes an ApiError with the service's code and message. A 304
  // is not an error.
  async function api(method, path, body, headers) {
    const init = { method, headers: Object.assign({ Accept: "application/json" }, authHeaders(), headers || {}), cache: "no-store" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let resp;
    try {
      resp = await fetch(path, init);
    } catch (err) {
      throw new ApiError(0, "NETWORK", "the server cannot be reached (" + err.message + ")");
    }
    if (resp.ok || resp.status === 304) return resp;
    let code = "HTTP_" + resp.status;
    let message = resp.statusText || "request failed";
    const text = await resp.text();
    const parsed = parseJSON(text);
    if (parsed && parsed.error) {
      code = parsed.error.code || code;
      message = parsed.error.message || message;
    }
    throw new ApiError(resp.status, code, message);
  }

  async function apiJSON(method, path, body) {
    const resp = await api(method, path, body);
    return resp.json();
  }

  function q(params) {
    return "?" + new URLSearchParams(params).toString();
  }

  // ---------------------------------------------------------------- alerts

  function showAlert(message) {
    const a = $("alert");
    a.replaceChildren(h("span", { textContent: message }), h("button", { type: "button", className: "link", textContent: "Dismiss", onclick: clearAlert }));
    a.hidden = false;
  }

  function clearAlert() {
    $("alert").hidden = true;
    $("alert").replaceChildren();
  }

  function reportError(err, what) {
    if (err instanceof ApiError && err.status === 401) {
      showAlert((state.key ? "The API key was refused: " : "This server needs an API key: enter it above. ") + "(" + err.message + ")");
      $("api-key").focus();
      return;
    }
    showAlert(what + ": " + (err && err.message ? err.message : String(err)));
  }

  // ---------------------------------------------------------------- key and scopes

  function initKey() {
    let stored = null;
    try {
      stored = sessionStorage.getItem(KEY_STORAGE);
    } catch {
      // storage unavailable: the key lives in memory only
    }
    if (stored) {
      state.key = stored;
      $("api-key").value = stored;
      $("remember-key").checked = true;
    }
    $("settings").addEventListener("submit", (e) => {
      e.preventDefault();
      state.key = $("api-key").value.trim();
      try {
        if ($("remember-key").checked && state.key) sessionStorage.setItem(KEY_STORAGE, state.key);
        else sessionStorage.removeItem(KEY_STORAGE);
      } catch {
        // storage unavailable
      }
      reload();
    });
  }

  async function reload() {
    clearAlert();
    try {
      await loadScopes();
    } catch (err) {
      reportError(err, "Listing scopes");
      return;
    }
    await selectScope(state.scope);
  }

  async function loadScopes() {
    let scopes;
    try {
      scopes = (await apiJSON("GET", "/v1/scopes")).scopes;
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== "NOT_FOUND") throw err;
      scopes = [{ name: "default", mode: "" }]; // a server without /v1/scopes
    }
    state.scopes = scopes;
    const sel = $("scope");
    sel.replaceChildren(...scopes.map((s) => h("option", { value: s.name, textContent: s.parent ? s.name + "  (in " + s.parent + ")" : s.name })));
    if (!scopes.some((s) => s.name === state.scope)) state.scope = scopes.length ? scopes[0].name : "default";
    sel.value = state.scope;
    sel.disabled = scopes.length === 0;
  }

  // selectScope shows a scope: its tools and both SDK formats, fetched
  // together and shown at once, so that the page never mixes two scopes'
  // (or two tool sets') data.
  async function selectScope(name) {
    const gen = ++state.gen;
    state.scope = name;
    $("scope").value = name;
    clearTimeout(state.pollTimer);
    state.sdk = { ts: null, prompt: null };
    state.tools = [];
    state.changes = [];
    closeSession();
    renderSDK();
    renderChanges();
    try {
      const [tools, ts, prompt] = await Promise.all([fetchTools(), fetchSDK("ts"), fetchSDK("prompt")]);
      if (gen !== state.gen) return;
      state.sdk = { ts, prompt };
      applyTools(tools);
    } catch (err) {
      if (gen === state.gen) reportError(err, "Loading scope " + name);
    }
    if (gen === state.gen) schedulePoll(gen);
  }

  function fetchTools() {
    return apiJSON("GET", "/v1/tools" + q({ scope: state.scope }));
  }

  // applyTools takes a /v1/tools answer and renders everything that
  // depends on the tools or the SDK.
  function applyTools(body) {
    state.tools = body.tools || [];
    state.mode = body.mode || "";
    $("scope-mode").textContent = state.mode ? "mode: " + state.mode : "";
    const sel = $("step-tool");
    const previous = sel.value;
    sel.replaceChildren(...state.tools.map((t) => h("option", { value: t.name, textContent: t.name })));
    if (state.tools.some((t) => t.name === previous)) sel.value = previous;
    fillStepArgs();
    renderSDK();
  }

  // ---------------------------------------------------------------- SDK

  async function fetchSDK(format, etag) {
    const resp = await api("GET", "/v1/sdk" + q({ scope: state.scope, format }), undefined, etag ? { "If-None-Match": etag } : undefined);
    if (resp.status === 304) return null;
    return { etag: resp.headers.get("ETag") || "", text: await resp.text() };
  }

  function schedulePoll(gen) {
    clearTimeout(state.pollTimer);
    state.pollTimer = setTimeout(() => pollSDK(gen), SDK_POLL_MS);
  }

  // pollSDK asks for the TypeScript SDK with its ETag; a new one means the
  // tool set changed: both formats are fetched again and diffed.
  async function pollSDK(gen) {
    if (gen !== state.gen) return;
    try {
      if (!document.hidden && state.sdk.ts) {
        const ts = await fetchSDK("ts", state.sdk.ts.etag);
        if (ts && gen === state.gen) {
          const [prompt, tools] = await Promise.all([fetchSDK("prompt"), fetchTools()]);
          if (gen !== state.gen) return;
          recordChange(state.sdk, { ts, prompt });
          state.sdk = { ts, prompt };
          applyTools(tools);
        }
      }
    } catch (err) {
      if (gen === state.gen && !(err instanceof ApiError && err.status === 0)) reportError(err, "Checking the SDK");
    }
    if (gen === state.gen) schedulePoll(gen);
  }

  // versionOf is the tool-set version an ETag carries ("<version>-<format>").
  function versionOf(etag) {
    return (etag || "").replace(/^W\//, "").replace(/^"|"$/g, "").replace(/-(ts|js|prompt)$/, "");
  }

  function recordChange(before, after) {
    const from = versionOf(before.ts.etag);
    const to = versionOf(after.ts.etag);
    const ops = Diff.diffLines(Diff.splitLines(before.ts.text), Diff.splitLines(after.ts.text));
    state.changes.unshift({
      time: new Date(),
      from,
      to,
      stats: Diff.stats(ops),
      diffs: {
        ts: Diff.unified("sdk.d.ts@" + from.slice(0, 8), "sdk.d.ts@" + to.slice(0, 8), before.ts.text, after.ts.text),
        prompt: Diff.unified("prompt.md@" + from.slice(0, 8), "prompt.md@" + to.slice(0, 8), before.prompt.text, after.prompt.text),
      },
    });
    state.changes.length = Math.min(state.changes.length, MAX_CHANGES);
    renderChanges();
  }

  function renderSDK() {
    const cur = state.sdk[state.format];
    const code = $("sdk-code");
    if (!cur) {
      code.replaceChildren();
      $("sdk-version").textContent = "";
    } else {
      Hl.render(code, state.format === "prompt" ? Hl.markdown(cur.text) : Hl.code(cur.text));
      $("sdk-version").textContent = "tool set " + versionOf(cur.etag).slice(0, 12);
    }
    renderSizes();
  }

  function sizeStat(label, n, id) {
    return h(
      "div",
      { className: "stat", id },
      h("span", { className: "stat-label", textContent: label }),
      h("span", { className: "stat-value", textContent: fmtInt(n) + " B" }),
      h("span", { className: "stat-sub", textContent: "≈ " + fmtInt(Sdk.tokens(n)) + " tokens" }),
    );
  }

  function renderSizes() {
    const { ts, prompt } = state.sdk;
    const box = $("sdk-sizes");
    const body = $("sdk-table").tBodies[0];
    if (!ts || !prompt) {
      box.replaceChildren();
      body.replaceChildren();
      return;
    }
    const tsParts = Sdk.perTool(ts.text);
    const promptParts = Sdk.perTool(prompt.text);
    const native = new Map(state.tools.map((t) => [t.name, Sdk.nativeBytes(t)]));
    const nativeTotal = [...native.values()].reduce((a, b) => a + b, 0);
    box.replaceChildren(
      sizeStat("Declarations", tsParts.total, "size-ts"),
      sizeStat("Prompt", promptParts.total, "size-prompt"),
      h(
        "div",
        { className: "stat" },
        h("span", { className: "stat-label", textContent: "Tools" }),
        h("span", { className: "stat-value", textContent: String(tsParts.tools.size) }),
        h("span", { className: "stat-sub", textContent: "tokens ≈ bytes ÷ 4" }),
      ),
    );
    const names = [...new Set([...tsParts.tools.keys(), ...native.keys()])].sort();
    const cell = (n) => (n === undefined ? h("td", { className: "num muted", textContent: "—" }) : h("td", { className: "num" }, fmtInt(n), h("span", { className: "tok", textContent: " ≈" + fmtInt(Sdk.tokens(n)) })));
    const rows = names.map((name) =>
      h("tr", { "data-tool": name }, h("th", { scope: "row" }, h("code", { textContent: name })), cell(tsParts.tools.get(name)), cell(promptParts.tools.get(name)), cell(native.get(name))),
    );
    rows.push(h("tr", { className: "shared" }, h("th", { scope: "row", textContent: "Shared (header, types, instructions)" }), cell(tsParts.shared), cell(promptParts.shared), cell(undefined)));
    rows.push(h("tr", { className: "total" }, h("th", { scope: "row", textContent: "Total" }), cell(tsParts.total), cell(promptParts.total), cell(native.size ? nativeTotal : undefined)));
    body.replaceChildren(...rows);
  }

  function renderChanges() {
    const box = $("sdk-changes");
    if (state.changes.length === 0) {
      box.replaceChildren(h("p", { className: "empty small", textContent: "No change since the page loaded; the SDK is checked every few seconds." }));
      return;
    }
    box.replaceChildren(
      ...state.changes.map((c) =>
        h(
          "article",
          { className: "change" },
          h(
            "p",
            { className: "change-head" },
            h("time", { dateTime: c.time.toISOString(), textContent: c.time.toLocaleTimeString("en-GB", { hour12: false }) }),
            " tool set ",
            h("code", { textContent: c.from.slice(0, 8) }),
            " → ",
            h("code", { textContent: c.to.slice(0, 8) }),
            " ",
            h("span", { className: "added", textContent: "+" + c.stats.added }),
            " ",
            h("span", { className: "removed", textContent: "−" + c.stats.removed }),
            " lines",
          ),
          c.diffs[state.format] ? diffBlock(c.diffs[state.format], "changes of the SDK") : empty("No change in this format."),
        ),
      ),
    );
  }

  function initTabs() {
    const tabs = [$("tab-ts"), $("tab-prompt")];
    const select = (tab) => {
      for (const t of tabs) {
        const on = t === tab;
        t.setAttribute("aria-selected", String(on));
        t.tabIndex = on ? 0 : -1;
      }
      $("sdk-panel").setAttribute("aria-labelledby", tab.id);
      state.format = tab.id === "tab-ts" ? "ts" : "prompt";
      renderSDK();
      renderChanges();
    };
    tabs.forEach((t, i) => {
      t.addEventListener("click", () => select(t));
      t.addEventListener("keydown", (e) => {
        if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
        const next = tabs[(i + (e.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
        next.focus();
        select(next);
      });
    });
    $("copy-sdk").addEventListener("click", async () => {
      const cur = state.sdk[state.format];
      if (!cur) return;
      try {
        await navigator.clipboard.writeText(cur.text);
        flash($("copy-sdk"), "Copied");
      } catch {
        flash($("copy-sdk"), "Copy failed");
      }
    });
  }

  function flash(button, text) {
    const old = button.textContent;
    button.textContent = text;
    setTimeout(() => (button.textContent = old), 1500);
  }

  // ---------------------------------------------------------------- editor

  function initEditor() {
    const ta = $("editor");
    const view = $("editor-view");
    const pre = view.parentElement;
    let pending = 0;
    const paint = () => {
      pending = 0;
      // The trailing space keeps a final empty line as tall as the textarea's.
      Hl.render(view, Hl.code(ta.value + "\n "));
    };
    ta.addEventListener("input", () => {
      if (!pending) pending = requestAnimationFrame(paint);
    });
    ta.addEventListener("scroll", () => {
      pre.scrollTop = ta.scrollTop;
      pre.scrollLeft = ta.scrollLeft;
    });
    let escaped = false;
    ta.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        run();
        return;
      }
      if (e.key === "Escape") {
        escaped = true;
        return;
      }
      if (e.key === "Tab" && !escaped && !e.altKey && !e.ctrlKey && !e.metaKey) {
        e.preventDefault();
        indent(ta, e.shiftKey);
        paint();
      }
      escaped = false;
    });
    ta.addEventListener("blur", () => (escaped = false));
    ta.setValue = (text) => {
      ta.value = text;
      ta.scrollTop = 0;
      paint();
    };
  }

  // indent inserts two spaces at the caret, or (shift) removes up to two
  // from the start of the caret's line.
  function indent(ta, outdent) {
    const { selectionStart: s, selectionEnd: e, value } = ta;
    if (!outdent) {
      ta.setRangeText("  ", s, e, "end");
      return;
    }
    const lineStart = value.lastIndexOf("\n", s - 1) + 1;
    const n = value.slice(lineStart, lineStart + 2).match(/^ {0,2}/)[0].length;
    if (n > 0) {
      ta.setRangeText("", lineStart, lineStart + n, "preserve");
      ta.setSelectionRange(Math.max(lineStart, s - n), Math.max(lineStart, e - n));
    }
  }

  function initExamples() {
    let list = [];
    try {
      list = JSON.parse($("examples").textContent || "[]");
    } catch {
      list = [];
    }
    const box = $("examples-list");
    box.replaceChildren(
      h("span", { className: "examples-label", textContent: "Examples" }),
      ...list.map((ex) =>
        h("button", {
          type: "button",
          className: "chip",
          textContent: ex.name,
          title: ex.summary,
          "aria-pressed": "false",
          "data-example": ex.name,
          onclick: () => loadExample(ex),
        }),
      ),
    );
    const first = list.find((ex) => ex.name === "chain.ts") || list[0];
    if (first) loadExample(first);
    else $("editor").setValue('const a = await tools.math_add({ a: 2, b: 3 })\nreturn a\n');
  }

  function loadExample(ex) {
    $("editor").setValue(ex.code);
    $("description").value = describe(ex);
    state.exampleName = ex.name;
    for (const b of $("examples-list").querySelectorAll(".chip")) b.setAttribute("aria-pressed", String(b.dataset.example === ex.name));
  }

  // describe makes a run description from an example: the first sentence
  // of its leading comment, else its file name.
  function describe(ex) {
    const first = (ex.summary || "").split(/(?<=\.)\s/)[0].replace(/\.$/, "");
    return truncate(first || ex.name, 120);
  }

  // ---------------------------------------------------------------- runs

  function setRunStatus(text, kind) {
    const s = $("run-status");
    s.textContent = text;
    s.className = "run-status" + (kind ? " " + kind : "");
  }

  async function run() {
    if (state.running) return;
    const code = $("editor").value;
    if (!code.trim()) {
      setRunStatus("Write a program first.", "err");
      return;
    }
    state.running = true;
    const button = $("run");
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    button.textContent = "Running…";
    setRunStatus("Running…", "busy");
    const scope = state.scope;
    try {
      const sess = await ensureSession();
      const started = performance.now();
      const res = await apiJSON("POST", "/v1/run", { code, description: $("description").value.trim() || "playground run", session_id: sess.id });
      const elapsed = performance.now() - started;
      state.lastRun = { res, elapsed, scope };
      renderResult();
      renderTimeline();
      setRunStatus(
        (res.is_error ? "Failed" : "Succeeded") + " in " + fmtMs(elapsed) + " (round trip) with " + res.calls.length + " nested call" + (res.calls.length === 1 ? "" : "s") + ".",
        res.is_error ? "err" : "ok",
      );
    } catch (err) {
      setRunStatus("The run did not start: " + err.message, "err");
      reportError(err, "Run");
    } finally {
      state.running = false;
      button.disabled = false;
      button.removeAttribute("aria-busy");
      button.textContent = "Run";
    }
  }

  function renderResult() {
    const { res } = state.lastRun;
    const b = $("result-badge");
    b.hidden = false;
    b.className = "badge " + (res.is_error ? "err" : "ok");
    b.textContent = res.is_error ? "Failed" + (res.error && res.error.kind ? " · " + res.error.kind : "") : "Succeeded";
    const parts = [];
    parts.push(
      h("p", { className: "meta-line" }, "call ", h("code", { textContent: res.call_id }), " in session ", h("code", { textContent: res.session_id })),
    );
    if (res.is_error) {
      const e = res.error || {};
      parts.push(
        h(
          "div",
          { className: "error-box", role: "group", "aria-label": "error" },
          h("p", {}, h("strong", { textContent: e.code || "ERROR" }), e.kind ? " (" + e.kind + ")" : "", ": ", e.message || ""),
        ),
      );
      const text = (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
      if (text) parts.push(h("h3", { textContent: "Output" }), codeBlock(text, "plain", "logs"));
    } else {
      const v = res.value || {};
      parts.push(h("h3", { textContent: "Result" }));
      parts.push("result" in v ? h("div", { id: "result-value" }, jsonBlock(v.result)) : empty("(no result)"));
      parts.push(h("h3", {}, "Logs ", h("span", { className: "count", textContent: String((v.logs || []).length) })));
      parts.push((v.logs || []).length ? codeBlock(v.logs.join("\n"), "plain", "logs") : empty("(no logs)"));
    }
    const contexts = res.contexts || [];
    if (contexts.length) {
      parts.push(h("h3", { textContent: "Contexts for the model" }));
      for (const c of contexts) parts.push(h("div", { className: "context" }, h("p", { className: "small" }, h("code", { textContent: c.source }), " ", c.text || ""), contentView(c.content || [])));
    }
    $("result-body").replaceChildren(...parts);
  }

  // contentView renders content blocks: text as text, images (of safe
  // types) as images, anything else as JSON.
  function contentView(blocks) {
    const box = h("div", { className: "content" });
    for (const b of blocks) {
      if (b.type === "text") box.appendChild(codeBlock(b.text || "", "plain", "text-block"));
      else if (b.type === "image" && IMAGE_TYPES.has(b.mimeType) && /^[A-Za-z0-9+/=\s]*$/.test(b.data || "")) {
        box.appendChild(h("img", { className: "content-image", src: "data:" + b.mimeType + ";base64," + b.data, alt: "image content (" + b.mimeType + ")" }));
      } else box.appendChild(jsonBlock(b));
    }
    return box;
  }

  // runSpan is the run's wall-clock span: from its tool/call event to its
  // tool/result event in the session log, widened to cover every nested
  // call (the whole span of the calls when the events are not in yet).
  function runSpan(res) {
    let start = Infinity;
    let end = -Infinity;
    for (const ev of state.events) {
      if (ev.call_id !== res.call_id) continue;
      if (ev.type === "tool/call") start = timeMs(ev.time);
      if (ev.type === "tool/result") end = timeMs(ev.time);
    }
    for (const c of res.calls) {
      start = Math.min(start, timeMs(c.started_at));
      end = Math.max(end, timeMs(c.ended_at));
    }
    if (!Number.isFinite(start) || !Number.isFinite(end) || end <= start) return { start: 0, span: 1 };
    return { start, span: end - start };
  }

  function renderTimeline() {
    const { res } = state.lastRun;
    const box = $("timeline");
    const calls = res.calls || [];
    if (calls.length === 0) {
      $("calls-summary").textContent = "";
      box.replaceChildren(empty("The program made no tool calls."));
      return;
    }
    const { start, span } = runSpan(res);
    const failed = calls.filter((c) => c.is_error).length;
    $("calls-summary").textContent = calls.length + " call" + (calls.length === 1 ? "" : "s") + (failed ? ", " + failed + " failed" : "") + " · run " + fmtMs(span);
    const axis = h(
      "div",
      { className: "axis", "aria-hidden": "true" },
      h("span", { textContent: "#" }),
      h("span", { textContent: "tool" }),
      h("span", { className: "axis-scale" }, h("span", { textContent: "0" }), h("span", { textContent: fmtMs(span) })),
      h("span", { className: "num", textContent: "duration" }),
      h("span", { textContent: "outcome" }),
    );
    // Re-rendering (when the run's own events arrive) keeps open rows open.
    const open = new Set([...box.querySelectorAll(".call > details[open]")].map((d) => d.parentElement.dataset.sub));
    const list = h("ol", { className: "calls" });
    calls.forEach((c, i) => {
      const row = callRow(c, i, start, span);
      if (open.has(c.sub_call_id)) row.firstElementChild.open = true;
      list.appendChild(row);
    });
    box.replaceChildren(axis, list);
  }

  function callRow(c, i, t0, span) {
    const s = timeMs(c.started_at);
    const e = timeMs(c.ended_at);
    const dur = Math.max(0, e - s);
    const left = Math.min(100, Math.max(0, ((s - t0) / span) * 100));
    const width = Math.min(100 - left, Math.max(0.6, (dur / span) * 100));
    const bar = h("span", { className: "bar" + (c.is_error ? " err" : "") });
    bar.style.left = left + "%";
    bar.style.width = width + "%";
    const outcome = c.is_error ? badge((c.error && c.error.code) || "error", "err") : badge("ok", "ok");
    outcome.title = c.is_error && c.error ? c.error.code + ": " + c.error.message : "succeeded";
    const summary = h(
      "summary",
      {},
      h("span", { className: "idx", textContent: String(i + 1) }),
      h("span", { className: "call-name" }, h("code", { textContent: c.name }), h("span", { className: "call-args", textContent: truncate(compactJSON(c.arguments), 60) })),
      h("span", { className: "track", role: "img", "aria-label": "starts at " + fmtMs(s - t0) + ", takes " + fmtMs(dur) + " of the run's " + fmtMs(span) }, bar),
      h("span", { className: "num dur", textContent: fmtMs(dur) }),
      outcome,
    );
    const body = h("div", { className: "call-body" });
    body.appendChild(h("h4", { textContent: "Arguments" }));
    body.appendChild(jsonBlock(c.arguments));
    if (c.error) {
      body.appendChild(h("h4", { textContent: "Error" }));
      body.appendChild(h("p", { className: "error-box" }, h("strong", { textContent: c.error.code || "ERROR" }), ": ", c.error.message || ""));
    }
    if ((c.content || []).length) {
      body.appendChild(h("h4", { textContent: "Content" }));
      body.appendChild(contentView(c.content));
    }
    const pres = presentation(c.name, c.arguments);
    if (pres) {
      body.appendChild(h("h4", { textContent: "Presentation" }));
      body.appendChild(pres);
    }
    body.appendChild(h("p", { className: "small muted" }, "sub-call ", h("code", { textContent: c.sub_call_id }), " · " + fmtClock(c.started_at) + " → " + fmtClock(c.ended_at)));
    return h("li", { className: "call" + (c.is_error ? " is-error" : ""), "data-tool": c.name, "data-sub": c.sub_call_id }, h("details", {}, summary, body));
  }

  // presentation renders what a tool's presentationMeta would show, for the
  // nested calls whose meta is not in the run result: files_edit's unified
  // diff, computed from its arguments exactly as the tool does.
  function presentation(name, args) {
    if (name === "files_edit" && args && typeof args.old === "string" && typeof args.new === "string") {
      const withNL = (s) => (s !== "" && !s.endsWith("\n") ? s + "\n" : s);
      const path = String(args.path || "");
      return diffBlock(Diff.unified("a/" + path, "b/" + path, withNL(args.old), withNL(args.new)), "diff of the edit to " + path);
    }
    return null;
  }

  // metaView renders a top-level call's presentationMeta.
  function metaView(meta) {
    if (meta && meta.kind === "diff" && typeof meta.diff === "string") return diffBlock(meta.diff, "diff of " + (meta.path || "the change"));
    return jsonBlock(meta);
  }

  // ---------------------------------------------------------------- session

  async function ensureSession() {
    if (!state.session) await newSession();
    return state.session;
  }

  async function newSession() {
    const gen = state.gen;
    const sess = await apiJSON("POST", "/v1/sessions", { scope: state.scope });
    if (gen !== state.gen) throw new Error("the scope changed while the session was being created");
    closeSession();
    state.session = { id: sess.id, scope: sess.scope };
    $("session-id").textContent = sess.id;
    followSession();
    return state.session;
  }

  function closeSession() {
    if (state.follow) state.follow.abort();
    state.follow = null;
    state.session = null;
    state.events = [];
    state.lastSeq = 0;
    state.approvals = [];
    $("session-id").textContent = "—";
    $("events").replaceChildren(h("li", { className: "empty", textContent: "Events of the session appear here as they are logged." }));
    setStreamState("no session");
    renderApprovals();
    $("step-result").replaceChildren();
  }

  function setStreamState(text, kind) {
    const s = $("stream-state");
    s.textContent = text;
    s.className = "pill" + (kind ? " " + kind : "");
  }

  function followSession() {
    const ctrl = new AbortController();
    state.follow = ctrl;
    const id = state.session.id;
    Sse.follow("/v1/sessions/" + encodeURIComponent(id) + "/events", {
      headers: authHeaders,
      after: 0,
      signal: ctrl.signal,
      onEvent: (ev) => {
        if (ctrl.signal.aborted) return;
        const e = parseJSON(ev.data);
        if (e) onSessionEvent(e);
      },
      onState: (s, err) => {
        if (ctrl.signal.aborted) return;
        if (s === "live") setStreamState("live", "live");
        else if (s === "connecting") setStreamState("connecting…");
        else if (s === "retrying") setStreamState("reconnecting…", "warn");
        else setStreamState(err ? "stopped: " + err.message : "stopped", err ? "err" : "");
      },
    });
  }

  function onSessionEvent(e) {
    if (typeof e.seq !== "number" || e.seq <= state.lastSeq) return;
    state.lastSeq = e.seq;
    state.events.push(e);
    const list = $("events");
    const stick = list.scrollTop + list.clientHeight >= list.scrollHeight - 8;
    if (state.events.length === 1) list.replaceChildren();
    list.appendChild(eventRow(e));
    while (list.children.length > MAX_EVENT_ROWS) list.firstElementChild.remove();
    if (stick) list.scrollTop = list.scrollHeight;
    if (e.type === "approval/asked" || e.type === "approval/answered") refreshApprovals();
    // The run's result may arrive before its own events: once they are in,
    // the time line is scaled to the run's span in the log.
    if (e.type === "tool/result" && state.lastRun && e.call_id === state.lastRun.res.call_id) renderTimeline();
  }

  const eventLabels = {
    "tool/call": "call",
    "tool/result": "result",
    "tool/code-dispatch-start": "sub-call",
    "tool/code-dispatch": "sub-result",
    "user/context": "context",
    "approval/asked": "asked",
    "approval/answered": "answered",
  };

  function eventSummary(e) {
    switch (e.type) {
      case "tool/call": {
        const args = parseJSON(e.arguments || "");
        if (e.name === "run_code" && args && args.description) return e.name + ": " + args.description;
        return e.name + " " + truncate(e.arguments || "", 80);
      }
      case "tool/result": {
        const text = (e.content || []).filter((c) => c.type === "text").map((c) => c.text).join(" ");
        return (e.is_error ? "error" + (e.error ? " " + e.error.code : "") + ": " : "") + truncate(text || "(no text)", 90);
      }
      case "tool/code-dispatch-start":
        return e.name + " " + truncate(compactJSON(e.arguments), 70);
      case "tool/code-dispatch":
        return e.name + (e.is_error ? " failed" + (e.error ? ": " + e.error.message : "") : " ok") + " · " + fmtMs(Math.max(0, timeMs(e.ended_at) - timeMs(e.started_at)));
      case "user/context":
        return (e.source || "") + ": " + truncate(e.text || "", 80);
      case "approval/asked":
        return e.tool + " waits for a person" + (e.reason ? ": " + e.reason : "");
      case "approval/answered":
        return e.decision + (e.reason ? ": " + e.reason : "");
    }
    return "";
  }

  function eventRow(e) {
    const nested = e.type.startsWith("tool/code-dispatch");
    const failed = (e.type === "tool/result" || e.type === "tool/code-dispatch") && e.is_error;
    const kind = e.type.startsWith("approval/") ? "etype-approval" : failed ? "etype-failed" : "";
    const summary = h(
      "summary",
      {},
      h("span", { className: "seq", textContent: String(e.seq) }),
      h("time", { dateTime: e.time, textContent: fmtClock(e.time) }),
      h("span", { className: "etype " + kind, textContent: eventLabels[e.type] || e.type, title: e.type }),
      h("span", { className: "esum", textContent: eventSummary(e) }),
    );
    const li = h("li", { className: "ev" + (nested ? " nested" : ""), "data-type": e.type }, h("details", {}, summary, jsonBlock(e)));
    if (e.type === "tool/result" && e.meta !== undefined) li.appendChild(h("div", { className: "meta" }, metaView(e.meta)));
    return li;
  }

  async function refreshApprovals() {
    const sess = state.session;
    if (!sess) return;
    try {
      const list = await apiJSON("GET", "/v1/sessions/" + encodeURIComponent(sess.id) + "/approvals");
      if (state.session !== sess) return;
      state.approvals = list.approvals;
      renderApprovals();
    } catch (err) {
      reportError(err, "Listing approvals");
    }
  }

  function renderApprovals() {
    const n = state.approvals.length;
    $("approvals-count").textContent = String(n);
    $("approvals").classList.toggle("pending", n > 0);
    const box = $("approvals-list");
    if (n === 0) {
      box.replaceChildren(h("p", { className: "empty small", textContent: "No call is waiting for a person." }));
    } else {
      box.replaceChildren(...state.approvals.map(approvalCard));
    }
    if (state.running) setRunStatus(n ? "Waiting for approval: " + state.approvals.map((a) => a.tool).join(", ") + "." : "Running…", n ? "warn" : "busy");
  }

  function approvalCard(a) {
    const reasonId = "reason-" + a.id;
    const reason = h("input", { type: "text", id: reasonId, placeholder: "optional", spellcheck: false });
    const answer = async (decision, buttons) => {
      buttons.forEach((b) => (b.disabled = true));
      try {
        await api("POST", "/v1/sessions/" + encodeURIComponent(state.session.id) + "/approvals/" + encodeURIComponent(a.id), { decision, reason: reason.value.trim() });
      } catch (err) {
        reportError(err, "Answering the approval");
      }
      refreshApprovals();
    };
    const allow = h("button", { type: "button", className: "primary small", textContent: "Allow" });
    const deny = h("button", { type: "button", className: "danger small", textContent: "Deny" });
    allow.onclick = () => answer("allow", [allow, deny]);
    deny.onclick = () => answer("deny", [allow, deny]);
    const args = a.arguments;
    let preview;
    if (a.tool === "files_edit") preview = presentation("files_edit", args);
    else if (a.tool === "files_write" && args && typeof args.content === "string") preview = h("div", {}, h("p", { className: "small" }, "write ", h("code", { textContent: String(args.path) })), codeBlock(args.content, "plain"));
    return h(
      "article",
      { className: "approval", "data-approval": a.id, "aria-label": "approval for " + a.tool },
      h("p", { className: "approval-head" }, h("code", { className: "tool", textContent: a.tool }), a.reason ? h("span", { className: "reason", textContent: a.reason }) : null, h("span", { className: "muted small", textContent: a.asked_at ? fmtClock(a.asked_at) : "" })),
      preview || null,
      h("details", {}, h("summary", { textContent: "Arguments" }), jsonBlock(args)),
      h("div", { className: "approval-actions" }, h("label", { htmlFor: reasonId, textContent: "Reason" }), reason, allow, deny),
    );
  }

  // ---------------------------------------------------------------- direct tool calls

  // skeleton makes example arguments from a JSON Schema: the required
  // properties with a value of their type.
  function skeleton(schema) {
    if (!schema || schema.type !== "object" || !schema.properties) return {};
    const out = {};
    const required = new Set(schema.required || []);
    for (const [name, p] of Object.entries(schema.properties)) {
      if (!required.has(name)) continue;
      const t = Array.isArray(p.type) ? p.type[0] : p.type;
      out[name] = p.enum ? p.enum[0] : t === "string" ? "" : t === "number" || t === "integer" ? 0 : t === "boolean" ? false : t === "array" ? [] : t === "object" ? {} : null;
    }
    return out;
  }

  function fillStepArgs() {
    const tool = state.tools.find((t) => t.name === $("step-tool").value);
    $("step-args").value = tool ? JSON.stringify(skeleton(tool.parameters)) : "{}";
  }

  let stepCounter = 0;

  function initSteps() {
    $("step-tool").addEventListener("change", fillStepArgs);
    $("step-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const name = $("step-tool").value;
      const args = $("step-args").value.trim() || "{}";
      if (!name) return;
      const out = $("step-result");
      const send = $("step-send");
      send.disabled = true;
      out.replaceChildren(h("p", { className: "small muted", role: "status", textContent: "Waiting for " + name + "… (it may need an approval above)" }));
      try {
        const sess = await ensureSession();
        const id = "pg_" + Date.now().toString(36) + "_" + ++stepCounter;
        const resp = await apiJSON("POST", "/v1/sessions/" + encodeURIComponent(sess.id) + "/steps", { tool_calls: [{ id, name, arguments: args }] });
        out.replaceChildren(...resp.results.map(stepResultView));
      } catch (err) {
        out.replaceChildren(h("p", { className: "error-box", textContent: err.message }));
      } finally {
        send.disabled = false;
      }
    });
  }

  function stepResultView(r) {
    return h(
      "div",
      { className: "step-out", "data-outcome": r.is_error ? "error" : "ok" },
      h("p", {}, r.is_error ? badge((r.error && r.error.code) || "error", "err") : badge("ok", "ok"), " ", h("code", { textContent: r.tool_call_id }), r.error ? " " + r.error.message : ""),
      contentView(r.content || []),
      r.meta !== undefined ? metaView(r.meta) : null,
    );
  }

  // ---------------------------------------------------------------- start

  function start() {
    initKey();
    initTabs();
    initEditor();
    initExamples();
    initSteps();
    $("run").addEventListener("click", run);
    $("scope").addEventListener("change", (e) => selectScope(e.target.value));
    $("new-session").addEventListener("click", async () => {
      try {
        await newSession();
      } catch (err) {
        reportError(err, "Creating a session");
      }
    });
    reload();
  }

  start();
})();
