// The playground's end-to-end test, driven by browser_test.go: playwright-core
// drives the system Chromium (no downloaded browser) through the page served
// by a real codemode server, as a user would. Each step waits for what the
// page must show (a wait's timeout is a guard against hangs, not a timing
// assertion) and the script exits non-zero at the first failure.
//
// Environment: PLAYGROUND_URL (the server), PLAYGROUND_KEY (an API key for
// the scopes default and readonly), CHROMIUM (the browser binary),
// USER_DATA_DIR (a fresh profile folder), SCREENSHOT (the PNG to write).
import { chromium } from "playwright-core";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const url = env("PLAYGROUND_URL");
const key = env("PLAYGROUND_KEY");
const screenshot = env("SCREENSHOT");
const WAIT = { timeout: 20_000 };

function check(cond, message) {
  if (!cond) throw new Error("check failed: " + message);
}

async function step(name, fn) {
  const t = Date.now();
  await fn();
  console.log(`ok   ${name} (${Date.now() - t} ms)`);
}

const context = await chromium.launchPersistentContext(env("USER_DATA_DIR"), {
  executablePath: env("CHROMIUM"),
  headless: true,
  viewport: { width: 1440, height: 1000 },
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

// Problems the page reports on its own: script errors, CSP violations and
// failed requests, except the 401s the first step provokes on purpose.
const problems = [];
let expect401 = true;
const page = context.pages()[0] ?? (await context.newPage());
page.on("pageerror", (err) => problems.push("page error: " + err.message));
page.on("console", (msg) => {
  if (msg.type() !== "error") return;
  if (expect401 && /status of 401/.test(msg.text())) return;
  problems.push("console error: " + msg.text());
});

const text = (sel) => page.locator(sel).first().innerText();

try {
  await step("the page asks for an API key", async () => {
    const resp = await page.goto(url);
    check(resp.ok(), `GET / answered ${resp.status()}`);
    check((await page.title()) === "codemode playground", "page title");
    await page.locator("#alert").waitFor({ state: "visible", ...WAIT });
    check(/API key/.test(await text("#alert")), "the alert names the API key");
  });

  await step("with the key, the scopes the key may use are listed", async () => {
    await page.fill("#api-key", key);
    await page.click("#settings button[type=submit]");
    await page.waitForFunction(() => document.querySelectorAll("#scope option").length > 0, null, WAIT);
    const scopes = await page.$$eval("#scope option", (os) => os.map((o) => o.value));
    check(JSON.stringify(scopes) === JSON.stringify(["default", "readonly"]), "scopes " + JSON.stringify(scopes));
    await page.locator("#alert").waitFor({ state: "hidden", ...WAIT });
    expect401 = false;
  });

  await step("picking a scope shows its SDK, sizes per tool, and mode", async () => {
    await page.waitForFunction(() => document.querySelector("#sdk-code").textContent.includes("files_write("), null, WAIT);
    await page.selectOption("#scope", "readonly");
    await page.waitForFunction(() => {
      const code = document.querySelector("#sdk-code").textContent;
      return code.includes("math_add(") && !code.includes("files_write(");
    }, null, WAIT);
    check(!(await page.locator('#sdk-table tr[data-tool="files_write"]').count()), "readonly has no files_write row");
    await page.selectOption("#scope", "default");
    await page.waitForFunction(() => document.querySelector("#sdk-code").textContent.includes("files_write("), null, WAIT);
    check((await text("#scope-mode")) === "mode: both", "mode pill");
    check(/^[\d,]+ B$/.test(await text("#size-ts .stat-value")), "declarations size");
    check(/≈ [\d,]+ tokens/.test(await text("#size-prompt .stat-sub")), "prompt token estimate");
    await page.click("#per-tool summary");
    const row = await text('#sdk-table tr[data-tool="math_add"] td');
    check(/^[\d,]+ ≈[\d,]+$/.test(row.trim()), "math_add declarations cell: " + row);
    await page.click("#tab-prompt");
    await page.waitForFunction(() => document.querySelector("#sdk-code").textContent.startsWith("# Code Mode"), null, WAIT);
    check(await page.locator("#sdk-code .tok-heading").count(), "prompt headings highlighted");
    await page.click("#tab-ts");
    check(await page.locator("#sdk-code .tok-keyword").count(), "declarations highlighted");
  });

  await step("an example runs; its result and nested calls show", async () => {
    await page.click('[data-example="chain.ts"]');
    check((await page.inputValue("#editor")).includes("tools.math_add"), "the example is in the editor");
    await page.click("#run");
    await page.locator("#result-badge", { hasText: "Succeeded" }).waitFor(WAIT);
    check((await text("#result-value")).includes('"sum": 15'), "result value");
    check((await text("#result-body")).includes("2 + 3 = 5; + 10 = 15"), "logs");
    check((await page.locator('#timeline .call[data-tool="math_add"]').count()) === 2, "two math_add calls");
    check(await page.locator("#timeline .call .bar").first().isVisible(), "duration bars");
    await page.locator('#events li[data-type="tool/code-dispatch"]').nth(1).waitFor(WAIT);
    check((await text("#stream-state")) === "live", "the event stream is live");
  });

  await step("a run waits for approvals, answered from the page", async () => {
    await page.click('[data-example="files_diff.ts"]');
    await page.click("#run");
    const order = [];
    for (const tool of ["files_write", "files_edit", "files_read", "files_list"]) {
      const card = page.locator(".approval", { hasText: tool });
      await card.waitFor(WAIT);
      check(/Waiting for approval/.test(await text("#run-status")), "run status says it waits");
      order.push(tool);
      await card.getByRole("button", { name: "Allow" }).click();
      await card.waitFor({ state: "detached", ...WAIT });
    }
    await page.locator("#result-badge", { hasText: "Succeeded" }).waitFor(WAIT);
    check((await text("#result-value")).includes("call Alice"), "the edited content");
    const edit = page.locator('#timeline .call[data-tool="files_edit"]');
    await edit.locator("summary").click();
    check((await edit.locator(".diff-del").innerText()).includes("call Bob"), "edit diff: removed line");
    check((await edit.locator(".diff-add").innerText()).includes("call Alice"), "edit diff: added line");
    check((await page.locator('#events li[data-type="approval/answered"]').count()) === 4, "four answered approvals");
  });

  await step("a direct tool call asks, and a denial reaches the step's result", async () => {
    await page.click("#direct summary");
    await page.selectOption("#step-tool", "files_write");
    await page.fill("#step-args", JSON.stringify({ path: "notes/other.md", content: "never\n" }));
    await page.click("#step-send");
    const card = page.locator(".approval", { hasText: "files_write" });
    await card.waitFor(WAIT);
    check((await card.innerText()).includes("notes/other.md"), "the card shows what would be written");
    await card.locator("input").fill("not today");
    await card.getByRole("button", { name: "Deny" }).click();
    const out = page.locator('#step-result .step-out[data-outcome="error"]');
    await out.waitFor(WAIT);
    const t = await out.innerText();
    check(t.includes("APPROVAL_REJECTED") && t.includes("not today"), "denied step result: " + t);
  });

  await step("an allowed direct edit shows its presentationMeta diff", async () => {
    await page.selectOption("#step-tool", "files_edit");
    await page.fill("#step-args", JSON.stringify({ path: "notes/todo.md", old: "call Alice", new: "call Carol" }));
    await page.click("#step-send");
    const card = page.locator(".approval", { hasText: "files_edit" });
    await card.waitFor(WAIT);
    check((await card.locator(".diff-add").innerText()).includes("call Carol"), "the approval previews the edit");
    await card.getByRole("button", { name: "Allow" }).click();
    await page.locator('#step-result .step-out[data-outcome="ok"] .diff-add', { hasText: "call Carol" }).waitFor(WAIT);
    await page.locator('#events li[data-type="tool/result"] .meta .diff-add', { hasText: "call Carol" }).waitFor(WAIT);
  });

  await step("a change of the tool set shows as an SDK diff", async () => {
    const resp = await fetch(url + "/test/tools", { method: "POST" });
    check(resp.ok, "adding a tool answered " + resp.status);
    await page.locator("#sdk-changes .diff-add", { hasText: "test_added" }).first().waitFor(WAIT);
    check(await page.locator('#sdk-table tr[data-tool="test_added"]').count(), "the new tool has a size row");
    check(/\+\d+ −\d+ lines/.test(await text("#sdk-changes .change-head")), "change stats");
  });

  await step("screenshot", async () => {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.locator("#editor").blur();
    await page.screenshot({ path: screenshot, fullPage: true });
  });

  check(problems.length === 0, "the page reported problems:\n  " + problems.join("\n  "));
  console.log("PASS: the playground works end to end; screenshot at " + screenshot);
} catch (err) {
  console.error("FAIL: " + (err && err.stack ? err.stack : err));
  try {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: screenshot.replace(/\.png$/, "-failed.png"), fullPage: true });
    console.error("the page at the failure: " + screenshot.replace(/\.png$/, "-failed.png"));
  } catch {
    // no screenshot either
  }
  process.exitCode = 1;
} finally {
  await context.close();
}
