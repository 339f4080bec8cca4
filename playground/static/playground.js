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
  const FIND_DEBOUNCE_MS = 200; // the pause in typing after which "Find tools" searches
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
    withheld: [], // {name, reason} of the tools the scope withholds (/v1/tools)
    sdk: { ts: null, prompt: null }, // {etag, text} of each format
    tokens: null, // GET /v1/sdk/tokens of the SDK shown, or null (estimated)
    members: new Map(), // tool name → argument keys, from the declarations
    format: "ts", // the SDK tab shown
    changes: [], // newest first: {time, from, to, diffs: {ts, prompt}, stats}
    gen: 0, // bumped on each scope change; stale async work checks it
    pollTimer: 0,
    session: null, // {id, scope}
    follow: null, // AbortController of the event stream
    events: [],
    lastSeq: 0,
    approvals: [],
    suspended: null, // {sessionID, callID, scope}: a run suspended at an ask, whose result the log will bring
    running: false,
    lastRun: null,
    exampleName: "",
    sessionsCursor: "", // next_cursor of GET /v1/sessions
    runAfter: 0, // while a run is pending: the last seq before it started
    findTimer: 0, // the debounce of "Find tools"
    findSeq: 0, // bumped on each search; an answer to an older one is dropped
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

  // signed writes a difference with its sign: +12, −3, ±0.
  function signed(n) {
    return n > 0 ? "+" + fmtInt(n) : n < 0 ? "−" + fmtInt(-n) : "±0";
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

  // ---------------------------------------------------------------- URL state

  // The page's state lives in the URL's fragment, so that a reload (or a
  // shared link) keeps it: #scope=…&session=…&code=… (never the API key).
  function readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    return { scope: p.get("scope") || "", session: p.get("session") || "", code: p.get("code") };
  }

  let hashTimer = 0;
  function writeHash() {
    clearTimeout(hashTimer);
    hashTimer = 0;
    const p = new URLSearchParams();
    p.set("scope", state.scope);
    if (state.session) p.set("session", state.session.id);
    p.set("code", $("editor").value);
    history.replaceState(null, "", "#" + p.toString());
  }

  function writeHashSoon() {
    if (!hashTimer) hashTimer = setTimeout(writeHash, 300);
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
      reload(state.session ? state.session.id : readHash().session);
    });
  }

  async function reload(attachID) {
    clearAlert();
    try {
      await loadScopes();
    } catch (err) {
      reportError(err, "Listing scopes");
      return;
    }
    await selectScope(state.scope);
    if (attachID) await attachSession(attachID);
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
    state.tokens = null;
    state.tools = [];
    state.withheld = [];
    state.changes = [];
    closeSession();
    renderWithheld();
    renderFound(null);
    writeHash();
    renderSDK();
    renderChanges();
    listSessions(false);
    try {
      const [tools, ts, prompt, tokens] = await Promise.all([fetchTools(), fetchSDK("ts"), fetchSDK("prompt"), fetchTokens()]);
      if (gen !== state.gen) return;
      state.sdk = { ts, prompt };
      state.tokens = tokens;
      applyTools(tools);
    } catch (err) {
      if (gen === state.gen) reportError(err, "Loading scope " + name);
    }
    if (gen === state.gen) schedulePoll(gen);
  }

  // fetchTokens gets the token counts of the scope's SDK, counted by the
  // server with a real tokenizer; null from a server without them (the
  // page then estimates).
  async function fetchTokens() {
    try {
      return await apiJSON("GET", "/v1/sdk/tokens" + q({ scope: state.scope }));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && err.code !== "UNKNOWN_SCOPE") return null;
      throw err;
    }
  }

  function fetchTools() {
    return apiJSON("GET", "/v1/tools" + q({ scope: state.scope }));
  }

  // applyTools takes a /v1/tools answer and renders everything that
  // depends on the tools or the SDK.
  function applyTools(body) {
    state.tools = body.tools || [];
    state.withheld = body.withheld || [];
    state.mode = body.mode || "";
    renderWithheld();
    $("scope-mode").textContent = state.mode ? "mode: " + state.mode : "";
    const sel = $("step-tool");
    const previous = sel.value;
    sel.replaceChildren(...state.tools.map((t) => h("option", { value: t.name, textContent: t.name })));
    if (state.tools.some((t) => t.name === previous)) sel.value = previous;
    fillStepArgs();
    state.members = state.sdk.ts ? Sdk.members(state.sdk.ts.text) : new Map();
    renderSDK();
    findTools(); // the scope or its tool set changed: search it again
  }

  // renderWithheld lists the tools the scope withholds (its guards veto
  // every call of them) with the reason; hidden when there are none.
  function renderWithheld() {
    const list = state.withheld;
    $("withheld").hidden = list.length === 0;
    $("withheld-count").textContent = String(list.length);
    $("withheld-list").replaceChildren(
      ...list.map((w) => h("li", { "data-tool": w.name }, h("code", { textContent: w.name }), h("span", { className: "withheld-reason", textContent: w.reason || "withheld" }))),
    );
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
          const [prompt, tools, tokens] = await Promise.all([fetchSDK("prompt"), fetchTools(), fetchTokens()]);
          if (gen !== state.gen) return;
          recordChange(state.sdk, { ts, prompt }, state.tokens, tokens);
          state.sdk = { ts, prompt };
          state.tokens = tokens;
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

  function recordChange(before, after, tokensBefore, tokensAfter) {
    const from = versionOf(before.ts.etag);
    const to = versionOf(after.ts.etag);
    const ops = Diff.diffLines(Diff.splitLines(before.ts.text), Diff.splitLines(after.ts.text));
    // The token difference of each format: counted when the server counts,
    // else estimated from the bytes.
    const count = (sdk, tokens, format) => (tokens ? tokens[format].total : Sdk.tokens(Sdk.bytes(sdk[format].text)));
    const exact = Boolean(tokensBefore && tokensAfter);
    state.changes.unshift({
      time: new Date(),
      from,
      to,
      exact,
      tokens: {
        ts: count(after, exact && tokensAfter, "ts") - count(before, exact && tokensBefore, "ts"),
        prompt: count(after, exact && tokensAfter, "prompt") - count(before, exact && tokensBefore, "prompt"),
      },
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

  // tokenText is a token count as shown: counted, or estimated (≈).
  function tokenText(counted, bytes) {
    return counted === undefined ? "≈ " + fmtInt(Sdk.tokens(bytes)) + " tokens" : fmtInt(counted) + " tokens";
  }

  function sizeStat(label, n, counted, id) {
    return h(
      "div",
      { className: "stat", id },
      h("span", { className: "stat-label", textContent: label }),
      h("span", { className: "stat-value", textContent: fmtInt(n) + " B" }),
      h("span", { className: "stat-sub", textContent: tokenText(counted, n) }),
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
    // Counts of the SDK shown (the server's, for this tool set only).
    const tk = state.tokens && state.tokens.version === versionOf(ts.etag) ? state.tokens : null;
    box.replaceChildren(
      sizeStat("Declarations", tsParts.total, tk ? tk.ts.total : undefined, "size-ts"),
      // A catalog prompt names the tools' groups and declares only a few: the others are
      // found with tools.$search (and "Find tools" above).
      sizeStat(Sdk.isCatalog(prompt.text) ? "Prompt · catalog" : "Prompt", promptParts.total, tk ? tk.prompt.total : undefined, "size-prompt"),
      h(
        "div",
        { className: "stat" },
        h("span", { className: "stat-label", textContent: "Tools" }),
        h("span", { className: "stat-value", textContent: String(tsParts.tools.size) }),
        h("span", { className: "stat-sub", id: "token-source", textContent: tk ? "tokens: " + tk.encoding : "tokens ≈ bytes ÷ 4" }),
      ),
    );
    const names = [...new Set([...tsParts.tools.keys(), ...native.keys()])].sort();
    const cell = (n, counted) =>
      n === undefined
        ? h("td", { className: "num muted", textContent: "—" })
        : h("td", { className: "num" }, fmtInt(n) + " B", h("span", { className: "tok", textContent: counted === undefined ? " ≈" + fmtInt(Sdk.tokens(n)) + " tok" : " " + fmtInt(counted) + " tok" }));
    const at = (split, name) => (tk ? tk[split].tools[name] || 0 : undefined);
    const rows = names.map((name) =>
      h(
        "tr",
        { "data-tool": name },
        h("th", { scope: "row" }, h("code", { textContent: name })),
        cell(tsParts.tools.get(name), tsParts.tools.has(name) ? at("ts", name) : undefined),
        cell(promptParts.tools.get(name), promptParts.tools.has(name) ? at("prompt", name) : undefined),
        cell(native.get(name), native.has(name) ? at("native", name) : undefined),
      ),
    );
    rows.push(h("tr", { className: "shared" }, h("th", { scope: "row", textContent: "Shared (header, types, instructions)" }), cell(tsParts.shared, tk ? tk.ts.shared : undefined), cell(promptParts.shared, tk ? tk.prompt.shared : undefined), cell(undefined)));
    rows.push(h("tr", { className: "total" }, h("th", { scope: "row", textContent: "Total" }), cell(tsParts.total, tk ? tk.ts.total : undefined), cell(promptParts.total, tk ? tk.prompt.total : undefined), cell(native.size ? nativeTotal : undefined, tk && native.size ? tk.native.total : undefined)));
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
          h(
            "p",
            { className: "token-delta", "data-ts": String(c.tokens.ts), "data-prompt": String(c.tokens.prompt) },
            (c.exact ? "" : "≈ ") + signed(c.tokens.ts) + " tokens in the declarations, " + signed(c.tokens.prompt) + " in the prompt",
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

  // ---------------------------------------------------------------- finding tools

  // findTools searches the scope's tools for what the "Find tools" box holds, as
  // tools.$search does in a program (GET /v1/tools/search); an empty box clears the list.
  // Only the answer to the latest search is shown.
  async function findTools() {
    clearTimeout(state.findTimer);
    const seq = ++state.findSeq;
    const gen = state.gen;
    const text = $("find-q").value.trim();
    const group = $("find-group").value.trim();
    if (!text && !group) {
      renderFound(null);
      return;
    }
    const params = { scope: state.scope, q: text };
    if (group) params.group = group;
    try {
      const body = await apiJSON("GET", "/v1/tools/search" + q(params));
      if (seq === state.findSeq && gen === state.gen) renderFound(body);
    } catch (err) {
      if (seq !== state.findSeq || gen !== state.gen) return;
      if (err instanceof ApiError && err.status === 401) {
        renderFound(null);
        reportError(err, "Finding tools");
        return;
      }
      renderFound(null, err.message);
    }
  }

  // renderFound shows a search's answer ({total, matched, tools}), an error message, or
  // (both null) nothing.
  function renderFound(body, error) {
    $("find-error").hidden = !error;
    $("find-error").textContent = error || "";
    $("find-count").textContent = body ? fmtInt(body.matched) + " of " + fmtInt(body.total) + " tools" : "";
    const hits = (body && body.tools) || [];
    $("find-results").replaceChildren(...hits.map(foundItem));
    if (body && !hits.length) $("find-results").appendChild(h("li", { className: "empty small", textContent: "No tool matches; try other words." }));
  }

  // toolRef is how a program names a tool: tools.name, or tools["name"] when the name is
  // not an identifier.
  function toolRef(name) {
    return /^[A-Za-z_$][\w$]*$/.test(name) ? "tools." + name : "tools[" + JSON.stringify(name) + "]";
  }

  function foundItem(hit) {
    const insert = (text) => () => $("editor").insertText(text);
    return h(
      "li",
      { className: "found", "data-tool": hit.name },
      h("p", { className: "found-head" }, h("code", { className: "found-name", textContent: hit.name }), h("span", { className: "found-summary", textContent: hit.summary })),
      h("code", { className: "found-sig", textContent: hit.signature }),
      hit.also && hit.also.length ? h("p", { className: "hint small", textContent: "Also as " + hit.also.join(", ") }) : null,
      h(
        "p",
        { className: "found-actions" },
        h("button", { type: "button", className: "secondary small insert-call", textContent: "Insert call", title: "Insert a call of " + hit.name + " at the editor's cursor", onclick: insert("await " + toolRef(hit.name) + "({})") }),
        h("button", {
          type: "button",
          className: "secondary small insert-describe",
          textContent: "Insert $describe",
          title: "Insert a line that prints " + hit.name + "'s full declarations",
          onclick: insert("console.log(await tools.$describe(" + JSON.stringify(hit.name) + "))"),
        }),
      ),
    );
  }

  function initFind() {
    const soon = () => {
      clearTimeout(state.findTimer);
      state.findTimer = setTimeout(findTools, FIND_DEBOUNCE_MS);
    };
    $("find-q").addEventListener("input", soon);
    $("find-group").addEventListener("input", soon);
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
    const complete = initCompletion(ta, paint);
    ta.addEventListener("input", () => {
      if (!pending) pending = requestAnimationFrame(paint);
      writeHashSoon();
      complete.update();
    });
    ta.addEventListener("scroll", () => {
      pre.scrollTop = ta.scrollTop;
      pre.scrollLeft = ta.scrollLeft;
      complete.close();
    });
    let escaped = false;
    ta.addEventListener("keydown", (e) => {
      if (complete.keydown(e)) return;
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
    ta.addEventListener("blur", () => {
      escaped = false;
      complete.close();
    });
    ta.addEventListener("click", () => complete.close());
    ta.setValue = (text) => {
      ta.value = text;
      ta.scrollTop = 0;
      paint();
      writeHashSoon();
    };
    // insertText puts text at the caret (in place of a selection), leaves the caret after it
    // and focuses the editor.
    ta.insertText = (text) => {
      ta.focus();
      ta.setRangeText(text, ta.selectionStart, ta.selectionEnd, "end");
      complete.close();
      paint();
      writeHashSoon();
    };
  }

  // completionAt says what the text before the caret is completing, from
  // the SDK's declarations: a tool name after "tools.", or an argument key
  // inside "tools.name({ …" where a key may start. It returns {from, word,
  // items} (from: where the word starts) or null.
  function completionAt(text, caret) {
    const before = text.slice(0, caret);
    let m = /\btools\.([A-Za-z_$][\w$]*)?$/.exec(before);
    if (m) {
      // A name that is not an identifier goes in brackets: the "." goes too.
      const word = m[1] || "";
      const items = [...state.members.keys()].filter((n) => n.startsWith(word) && n !== word);
      return items.length ? { from: caret - word.length, word, items, kind: "tool" } : null;
    }
    // Inside the argument object of the last call: the object is still open (its
    // braces balance after the opening one) and the caret is where a key
    // starts (after "{" or "," and spaces).
    m = /^[^]*\btools(?:\.([A-Za-z_$][\w$]*)|\[("(?:[^"\\]|\\.)*")\])\(\s*\{([^]*)$/.exec(before);
    const tool = m && (m[1] || parseJSON(m[2]));
    if (!m || !state.members.has(tool)) return null;
    const inside = m[3];
    let depth = 0;
    for (const ch of inside) {
      if (ch === "{" || ch === "[" || ch === "(") depth++;
      else if (ch === "}" || ch === "]" || ch === ")") depth--;
      if (depth < 0) return null;
    }
    if (depth !== 0) return null;
    const k = /(?:^|[,{])\s*([A-Za-z_$][\w$]*)?$/.exec(inside);
    if (!k) return null;
    const word = k[1] || "";
    const used = new Set([...inside.matchAll(/(?:^|[,{])\s*([A-Za-z_$][\w$]*)\s*:/g)].map((x) => x[1]));
    const items = state.members.get(tool).filter((n) => n.startsWith(word) && n !== word && !used.has(n));
    return items.length ? { from: caret - word.length, word, items, kind: "key" } : null;
  }

  // initCompletion attaches the completion list to the editor: it opens as
  // the user types, ArrowUp/ArrowDown move, Enter or Tab insert, Escape
  // closes.
  function initCompletion(ta, paint) {
    const box = $("completions");
    let cur = null; // {from, items, kind} shown
    let sel = 0;
    const close = () => {
      cur = null;
      box.hidden = true;
      box.replaceChildren();
      ta.removeAttribute("aria-activedescendant");
      ta.setAttribute("aria-expanded", "false");
    };
    const show = () => {
      box.replaceChildren(
        ...cur.items.map((name, i) =>
          h("li", {
            role: "option",
            id: "completion-" + i,
            className: "completion" + (i === sel ? " selected" : ""),
            "aria-selected": String(i === sel),
            textContent: name,
            onmousedown: (e) => {
              e.preventDefault(); // keep the editor's focus
              sel = i;
              accept();
            },
          }),
        ),
      );
      ta.setAttribute("aria-activedescendant", "completion-" + sel);
      ta.setAttribute("aria-expanded", "true");
      // Place the list under the caret: the editor's font is monospaced.
      const lines = ta.value.slice(0, ta.selectionStart).split("\n");
      const style = getComputedStyle(ta);
      const lineHeight = parseFloat(style.lineHeight) || 20;
      const charWidth = measureChar(style.font);
      const top = parseFloat(style.paddingTop) + lines.length * lineHeight - ta.scrollTop;
      const left = parseFloat(style.paddingLeft) + lines[lines.length - 1].length * charWidth - ta.scrollLeft;
      box.style.top = Math.max(0, Math.min(top, ta.clientHeight - lineHeight)) + "px";
      box.style.left = Math.max(0, Math.min(left, ta.clientWidth - 160)) + "px";
      box.hidden = false;
    };
    const accept = () => {
      const name = cur.items[sel];
      const plain = /^[A-Za-z_$][\w$]*$/.test(name);
      let from = cur.from;
      let insert;
      if (cur.kind === "key") insert = (plain ? name : JSON.stringify(name)) + ": ";
      else if (plain) insert = name;
      else {
        insert = "[" + JSON.stringify(name) + "]";
        from--; // the "." of "tools."
      }
      ta.setRangeText(insert, from, ta.selectionStart, "end");
      close();
      paint();
      writeHashSoon();
    };
    return {
      update() {
        cur = completionAt(ta.value, ta.selectionStart);
        sel = 0;
        if (cur && ta.selectionStart === ta.selectionEnd) show();
        else close();
      },
      close,
      keydown(e) {
        if (!cur) return false;
        if (e.key === "ArrowDown" || e.key === "ArrowUp") {
          sel = (sel + (e.key === "ArrowDown" ? 1 : cur.items.length - 1)) % cur.items.length;
          show();
        } else if (e.key === "Enter" || e.key === "Tab") {
          accept();
        } else if (e.key === "Escape") {
          close();
        } else return false;
        e.preventDefault();
        return true;
      },
    };
  }

  let charWidths = new Map();
  function measureChar(font) {
    if (!charWidths.has(font)) {
      const ctx = document.createElement("canvas").getContext("2d");
      ctx.font = font;
      charWidths.set(font, ctx.measureText("0000000000").width / 10 || 8);
    }
    return charWidths.get(font);
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
    const fromURL = readHash().code;
    const first = list.find((ex) => ex.name === "chain.ts") || list[0];
    if (fromURL !== null) $("editor").setValue(fromURL);
    else if (first) loadExample(first);
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
    // The previous run's result goes at once: what shows while this one
    // waits is this run's own calls, from the log.
    state.lastRun = null;
    state.runAfter = state.lastSeq;
    clearResult("Running… the result appears here when the run ends.");
    renderTimeline();
    try {
      const sess = await ensureSession();
      const started = performance.now();
      const res = await apiJSON("POST", "/v1/run", { code, description: $("description").value.trim() || "playground run", session_id: sess.id });
      const elapsed = performance.now() - started;
      state.lastRun = { res, elapsed, scope };
      renderResult();
      renderTimeline();
      if (res.status === "suspended") {
        // Nothing holds the run now: it resumes by replay once its asks are
        // answered (below, or by anyone), and its result comes from the log.
        state.suspended = { sessionID: res.session_id, callID: res.call_id, scope };
        const n = (res.pending_approvals || []).length;
        setRunStatus("Suspended after " + fmtMs(elapsed) + ": waiting for " + n + " approval" + (n === 1 ? "" : "s") + ". Answer below; the run resumes where it was.", "busy");
        refreshApprovals();
      } else {
        setRunStatus(
          (res.is_error ? "Failed" : "Succeeded") + " in " + fmtMs(elapsed) + " (round trip) with " + res.calls.length + " nested call" + (res.calls.length === 1 ? "" : "s") + ".",
          res.is_error ? "err" : "ok",
        );
      }
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

  function clearResult(text) {
    $("result-badge").hidden = true;
    $("result-body").replaceChildren(h("p", { className: "empty", textContent: text }));
  }

  function renderResult() {
    const { res } = state.lastRun;
    const b = $("result-badge");
    b.hidden = false;
    const suspended = res.status === "suspended";
    b.className = "badge " + (suspended ? "warn" : res.is_error ? "err" : "ok");
    b.textContent = suspended ? "Suspended" : res.is_error ? "Failed" + (res.error && res.error.kind ? " · " + res.error.kind : "") : "Succeeded";
    const parts = [];
    parts.push(
      h("p", { className: "meta-line" }, "call ", h("code", { textContent: res.call_id }), " in session ", h("code", { textContent: res.session_id })),
    );
    if (suspended) {
      parts.push(h("p", { id: "result-suspended" }, "The run is suspended: no process holds it. It resumes by replay once these are answered:"));
      for (const p of res.pending_approvals || []) parts.push(h("p", { className: "small" }, h("code", { textContent: p.tool }), " ", p.reason || ""));
    } else if (res.is_error) {
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
      if (res.value === null && res.resumed) {
        // A resumed run's result comes from the log, as the model sees it.
        const text = (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
        parts.push(h("div", { id: "result-value" }, codeBlock(text, "plain", "text-block")));
      } else parts.push("result" in v ? h("div", { id: "result-value" }, jsonBlock(v.result)) : empty("(no result)"));
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

  // timelineSource is what the time line shows: the last run's calls, as
  // its result lists them; else (while a run is pending, or in a session
  // attached to) the latest run of the log, its calls as they start and
  // settle.
  function timelineSource() {
    const run = state.lastRun;
    if (run) return { calls: run.res.calls || [], callId: run.res.call_id };
    let callId = null;
    // While a run is pending, only its own run_code call (logged after it
    // started), never the one before it.
    const after = state.running ? state.runAfter : 0;
    for (const e of state.events) if (e.type === "tool/call" && e.name === "run_code" && e.seq > after) callId = e.call_id;
    if (!callId) return null;
    const calls = new Map(); // sub-call id → call, in start order
    for (const e of state.events) {
      if (e.root_call_id !== callId) continue;
      if (e.type === "tool/code-dispatch-start" && !calls.has(e.sub_call_id)) calls.set(e.sub_call_id, Object.assign({}, e, { started_at: e.time, pending: true }));
      else if (e.type === "tool/code-dispatch") calls.set(e.sub_call_id, e);
    }
    return { calls: [...calls.values()], callId };
  }

  // approvalWaits maps a call id (a sub-call's, for a program's SDK call)
  // to the times it waited for a person: {from, to} in ms, to NaN while
  // unanswered.
  function approvalWaits() {
    const byCall = new Map();
    const byID = new Map();
    for (const e of state.events) {
      if (e.type === "approval/asked") {
        const w = { from: timeMs(e.time), to: NaN };
        byID.set(e.approval_id, w);
        if (!byCall.has(e.call_id)) byCall.set(e.call_id, []);
        byCall.get(e.call_id).push(w);
      } else if (e.type === "approval/answered" && byID.has(e.approval_id)) {
        byID.get(e.approval_id).to = timeMs(e.time);
      }
    }
    return byCall;
  }

  // runSpan is the run's wall-clock span: from its tool/call event to its
  // tool/result event in the session log (now, while it runs), widened to
  // cover every nested call (the whole span of the calls when the events
  // are not in yet).
  function runSpan(src, now) {
    let start = Infinity;
    let end = -Infinity;
    let ended = false;
    for (const ev of state.events) {
      if (ev.call_id !== src.callId) continue;
      if (ev.type === "tool/call") start = timeMs(ev.time);
      if (ev.type === "tool/result") {
        end = timeMs(ev.time);
        ended = true;
      }
    }
    if (!ended && !state.lastRun) end = now;
    for (const c of src.calls) {
      start = Math.min(start, timeMs(c.started_at));
      end = Math.max(end, c.pending ? now : timeMs(c.ended_at));
    }
    if (!Number.isFinite(start) || !Number.isFinite(end) || end <= start) return { start: 0, span: 1 };
    return { start, span: end - start };
  }

  let timelineFrame = 0;
  function renderTimelineSoon() {
    if (!timelineFrame) timelineFrame = requestAnimationFrame(() => {
      timelineFrame = 0;
      renderTimeline();
    });
  }

  function renderTimeline() {
    const box = $("timeline");
    const src = timelineSource();
    if (!src) {
      $("calls-summary").textContent = "";
      box.replaceChildren(empty(state.running ? "The run's tool calls appear here as they are made." : "The tool calls a program makes appear here, on a time line scaled to the run."));
      return;
    }
    const calls = src.calls;
    if (calls.length === 0) {
      $("calls-summary").textContent = "";
      box.replaceChildren(empty(state.lastRun ? "The program made no tool calls." : "The run has made no tool call yet."));
      return;
    }
    const now = Date.now();
    const { start, span } = runSpan(src, now);
    const waits = approvalWaits();
    const failed = calls.filter((c) => c.is_error).length;
    let waited = 0;
    for (const c of calls) for (const w of waits.get(c.sub_call_id) || []) waited += (Number.isNaN(w.to) ? now : w.to) - w.from;
    $("calls-summary").textContent =
      calls.length + " call" + (calls.length === 1 ? "" : "s") + (failed ? ", " + failed + " failed" : "") + " · run " + fmtMs(span) + (waited ? " · " + fmtMs(waited) + " waiting for approval" : "");
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
      const row = callRow(c, i, start, span, waits.get(c.sub_call_id) || [], now);
      if (open.has(c.sub_call_id)) row.firstElementChild.open = true;
      list.appendChild(row);
    });
    box.replaceChildren(axis, list);
  }

  // segment is a bar on a call's track, from a to b (ms).
  function segment(cls, a, b, t0, span) {
    const left = Math.min(100, Math.max(0, ((a - t0) / span) * 100));
    const width = Math.min(100 - left, Math.max(0.6, ((b - a) / span) * 100));
    const bar = h("span", { className: cls });
    bar.style.left = left + "%";
    bar.style.width = width + "%";
    return bar;
  }

  // callRow draws one call: its time waiting for a person (hatched, apart)
  // and its own time (solid), which is the rest of its span.
  function callRow(c, i, t0, span, waits, now) {
    const spans = waits.map((w) => ({ from: w.from, to: Number.isNaN(w.to) ? now : w.to })).sort((a, b) => a.from - b.from);
    // A call's span covers its waits, however its own times were taken.
    const s = Math.min(timeMs(c.started_at), ...spans.map((w) => w.from));
    const e = Math.max(c.pending ? now : timeMs(c.ended_at), ...spans.map((w) => w.to));
    const dur = Math.max(0, e - s);
    let waitMs = 0;
    const tool = []; // [a, b] pieces of the call's span outside its waits
    let cur = s;
    for (const w of spans) {
      const a = Math.max(s, w.from);
      const b = Math.min(e, w.to);
      if (b > a) {
        waitMs += b - a;
        if (a > cur) tool.push([cur, a]);
        cur = Math.max(cur, b);
      }
    }
    if (e > cur || tool.length === 0) tool.push([cur, Math.max(cur, e)]);
    const toolMs = Math.max(0, dur - waitMs);
    const bars = [
      ...spans.map((w) => segment("bar wait", w.from, w.to, t0, span)),
      ...tool.map(([a, b]) => segment("bar" + (c.is_error ? " err" : "") + (c.pending ? " pending" : ""), a, b, t0, span)),
    ];
    const label = "starts at " + fmtMs(s - t0) + ", takes " + fmtMs(toolMs) + (waitMs ? " and waits " + fmtMs(waitMs) + " for an approval" : "") + ", of the run's " + fmtMs(span);
    const outcome = c.pending ? badge(spans.some((w) => w.to === now) ? "waiting" : "running", "warn") : c.is_error ? badge((c.error && c.error.code) || "error", "err") : badge("ok", "ok");
    outcome.title = c.pending ? "not settled yet" : c.is_error && c.error ? c.error.code + ": " + c.error.message : "succeeded";
    const summary = h(
      "summary",
      {},
      h("span", { className: "idx", textContent: String(i + 1) }),
      h("span", { className: "call-name" }, h("code", { textContent: c.name }), h("span", { className: "call-args", textContent: truncate(compactJSON(c.arguments), 60) })),
      h("span", { className: "track", role: "img", "aria-label": label }, ...bars),
      h("span", { className: "num dur" }, fmtMs(toolMs), waitMs ? h("span", { className: "wait-dur", textContent: "+" + fmtMs(waitMs) + " approval" }) : null),
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
    body.appendChild(h("p", { className: "small muted" }, "sub-call ", h("code", { textContent: c.sub_call_id }), " · " + fmtClock(c.started_at) + " → " + (c.pending ? "…" : fmtClock(c.ended_at))));
    return h(
      "li",
      { className: "call" + (c.is_error ? " is-error" : ""), "data-tool": c.name, "data-sub": c.sub_call_id, "data-wait-ms": String(Math.round(waitMs)), "data-tool-ms": String(Math.round(toolMs)) },
      h("details", {}, summary, body),
    );
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
    openSession(sess);
    listSessions(false);
    return state.session;
  }

  // attachSession shows an existing session, whoever created it (an MCP
  // client, another tab, a script): its events from the start, its
  // messages, and its pending approvals, which the page can answer. A
  // session of another scope the key may use switches the scope first.
  async function attachSession(id) {
    id = id.trim();
    if (!id) return;
    let sess;
    try {
      sess = await apiJSON("GET", "/v1/sessions/" + encodeURIComponent(id));
    } catch (err) {
      reportError(err, "Attaching to session " + id);
      return;
    }
    if (sess.scope !== state.scope) {
      if (!state.scopes.some((s) => s.name === sess.scope)) {
        showAlert("Session " + id + " is in scope " + sess.scope + ", which this page does not list.");
        return;
      }
      await selectScope(sess.scope);
    }
    openSession(sess);
  }

  function openSession(sess) {
    closeSession();
    state.session = { id: sess.id, scope: sess.scope };
    $("session-id").textContent = sess.id;
    $("attach-id").value = "";
    writeHash();
    markListedSession();
    followSession();
    refreshApprovals();
    refreshMessages();
  }

  // listSessions fills the list of the scope's sessions from GET
  // /v1/sessions?scope= (more, with the cursor of the last page). A server
  // without that route still lets a session be attached by its id.
  async function listSessions(more) {
    const gen = state.gen;
    const box = $("sessions-list");
    const params = { scope: state.scope };
    if (more && state.sessionsCursor) params.cursor = state.sessionsCursor;
    let body;
    try {
      body = await apiJSON("GET", "/v1/sessions" + q(params));
    } catch (err) {
      if (gen !== state.gen) return;
      $("sessions-more").hidden = true;
      if (err instanceof ApiError && (err.status === 404 || err.status === 405) && err.code !== "UNKNOWN_SCOPE") {
        box.replaceChildren(h("li", { className: "empty small", textContent: "This server does not list sessions; attach to one by its id." }));
      } else if (!(err instanceof ApiError && err.status === 401)) {
        box.replaceChildren(h("li", { className: "empty small", textContent: "Listing sessions failed: " + err.message }));
      }
      return;
    }
    if (gen !== state.gen) return;
    const list = Array.isArray(body) ? body : body.sessions || [];
    state.sessionsCursor = (!Array.isArray(body) && body.next_cursor) || "";
    if (!more) box.replaceChildren();
    for (const sess of list) {
      if (box.querySelector('[data-session="' + CSS.escape(sess.id) + '"]')) continue;
      box.appendChild(
        h(
          "li",
          { "data-session": sess.id },
          h("button", { type: "button", className: "link session-link", onclick: () => attachSession(sess.id) }, h("code", { textContent: sess.id })),
          sess.created_at ? h("span", { className: "muted small", textContent: " " + new Date(timeMs(sess.created_at)).toLocaleString("en-GB", { hour12: false }) }) : null,
        ),
      );
    }
    if (!box.children.length) box.appendChild(h("li", { className: "empty small", textContent: "No session in this scope yet." }));
    $("sessions-more").hidden = !state.sessionsCursor;
    markListedSession();
  }

  function markListedSession() {
    for (const li of $("sessions-list").querySelectorAll("li[data-session]")) {
      li.classList.toggle("current", Boolean(state.session && li.dataset.session === state.session.id));
    }
  }

  // sessionGET GETs path below the current session's URL. It resolves to the
  // body, or to undefined when no session is open or another one was opened
  // while the request ran.
  async function sessionGET(path) {
    const sess = state.session;
    if (!sess) return undefined;
    const body = await apiJSON("GET", "/v1/sessions/" + encodeURIComponent(sess.id) + path);
    return state.session === sess ? body : undefined;
  }

  // refreshMessages shows the session's conversation as a model sees it.
  async function refreshMessages() {
    const sess = state.session;
    try {
      const body = await sessionGET("/messages");
      if (body !== undefined) renderMessages(body.messages || []);
    } catch (err) {
      if (state.session === sess) reportError(err, "Reading the session's messages");
    }
  }

  let messagesTimer = 0;
  function refreshMessagesSoon() {
    clearTimeout(messagesTimer);
    messagesTimer = setTimeout(refreshMessages, 200);
  }

  function renderMessages(msgs) {
    $("messages-count").textContent = String(msgs.length);
    const box = $("messages-list");
    if (!msgs.length) {
      box.replaceChildren(h("li", { className: "empty small", textContent: "No messages yet." }));
      return;
    }
    box.replaceChildren(
      ...msgs.map((m) => {
        let text;
        if (m.tool_calls) text = m.tool_calls.map((c) => c.name + " " + truncate(c.arguments || "", 200)).join("\n");
        else text = (m.content || []).map((c) => (c.type === "text" ? c.text : "[" + c.type + "]")).join("\n");
        return h(
          "li",
          { className: "msg" + (m.is_error ? " is-error" : ""), "data-role": m.role },
          h("span", { className: "msg-role", textContent: m.role + (m.source ? " · " + m.source : "") }),
          h("span", { className: "msg-text", textContent: truncate(text || "(empty)", 400) }),
        );
      }),
    );
  }

  function closeSession() {
    if (state.follow) state.follow.abort();
    state.follow = null;
    state.session = null;
    state.events = [];
    state.lastSeq = 0;
    state.approvals = [];
    $("session-id").textContent = "—";
    renderMessages([]);
    // The last run belongs to the session it ran in; a run being started
    // (which opens its session first) keeps its pending view.
    if (!state.running) {
      state.lastRun = null;
      clearResult("Run a program to see its result and logs here.");
      setRunStatus("");
    }
    renderTimeline();
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
    if (e.type === "tool/result" && state.suspended && e.call_id === state.suspended.callID) resumedResult(state.suspended);
    if (e.type === "tool/result" || e.type === "user/context") refreshMessagesSoon();
    // The time line follows the log: a run's calls and approval waits as
    // they happen, and its span once its result is in.
    if (e.type.startsWith("tool/") || e.type.startsWith("approval/")) renderTimelineSoon();
  }

  // resumedResult shows the result of a suspended run once it has resumed
  // and settled, as the log holds it.
  async function resumedResult(susp) {
    state.suspended = null;
    try {
      const call = await apiJSON("GET", "/v1/sessions/" + encodeURIComponent(susp.sessionID) + "/calls/" + encodeURIComponent(susp.callID));
      const r = call.result || {};
      state.lastRun = {
        scope: susp.scope,
        elapsed: 0,
        res: { session_id: susp.sessionID, call_id: susp.callID, status: "completed", resumed: true, is_error: !!r.is_error, error: r.error || null, content: r.content || [], value: null, calls: call.calls || [], contexts: r.contexts || [] },
      };
      renderResult();
      renderTimeline();
      setRunStatus(r.is_error ? "The resumed run failed." : "The run resumed and finished.", r.is_error ? "err" : "ok");
    } catch (err) {
      reportError(err, "Resumed run");
    }
  }

  const eventLabels = {
    "tool/code-suspended": "suspended",
    "tool/code-resumed": "resumed",
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
      case "tool/code-suspended":
        return "the run suspends: " + (e.waiting || []).length + " call" + ((e.waiting || []).length === 1 ? "" : "s") + " wait for a person";
      case "tool/code-resumed":
        return "the run resumes by replay";
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
    try {
      const body = await sessionGET("/approvals");
      if (body === undefined) return;
      // {"approvals": [...]}, or a bare array from older servers.
      state.approvals = Array.isArray(body) ? body : body.approvals || [];
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
    const initial = readHash();
    if (initial.scope) state.scope = initial.scope;
    initKey();
    initTabs();
    initEditor();
    initExamples();
    initSteps();
    initFind();
    $("run").addEventListener("click", run);
    $("scope").addEventListener("change", (e) => selectScope(e.target.value));
    $("attach-form").addEventListener("submit", (e) => {
      e.preventDefault();
      attachSession($("attach-id").value);
    });
    $("sessions-refresh").addEventListener("click", () => listSessions(false));
    $("sessions-more").addEventListener("click", () => listSessions(true));
    $("new-session").addEventListener("click", async () => {
      try {
        await newSession();
      } catch (err) {
        reportError(err, "Creating a session");
      }
    });
    reload(initial.session);
  }

  start();
})();
