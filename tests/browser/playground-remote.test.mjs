// The playground attached to a session hosted by the native session server
// (cmd/floe-server, its scripted model): the Remote session form, a prompt,
// the approvals on the page, steering, the answer on screen, Stop → abort.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { baseURL, explain, launch, page as firstPage, ROOT } from "./harness.mjs";

const RUN = 60_000;
const tmp = mkdtempSync(join(tmpdir(), "floe-pg-remote-"));
const binary = join(tmp, "floe-server");
const servers = [];

before(() => {
  execFileSync("go", ["build", "-o", binary, "./cmd/floe-server"], { cwd: ROOT, stdio: "inherit" });
});
after(() => {
  for (const p of servers) p.kill("SIGKILL");
  rmSync(tmp, { recursive: true, force: true });
});

// start runs floe-server on a free port, allowing the playground's origin.
function start(...args) {
  const p = spawn(binary, ["--port", "0", "--dir", ":memory:", "--origin", baseURL(), ...args], { stdio: ["ignore", "pipe", "inherit"] });
  servers.push(p);
  return new Promise((resolve, reject) => {
    let out = "";
    p.stdout.on("data", (b) => {
      out += b;
      const m = out.match(/listening on (http:\/\/\S+?)\/? /);
      if (m) resolve(m[1]);
    });
    p.on("exit", (code) => reject(new Error(`floe-server exited ${code}: ${out}`)));
  });
}

async function create(base, token) {
  const resp = await fetch(base + "/api/sessions", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify({ approvalMode: "ask" }),
  });
  assert.equal(resp.status, 201);
  return (await resp.json()).id;
}

const idle = (page) => page.locator('body[data-state="idle"]').waitFor({ timeout: RUN });
const askCard = (page, tool) => page.locator("#transcript > .card.ask", { has: page.locator(".tool-name", { hasText: tool }) }).last();

async function attach(page, base, id, token) {
  await page.locator(".remote summary").click();
  await page.getByLabel("Server URL").fill(base);
  await page.getByLabel("Session id").fill(id);
  await page.getByLabel("Token (optional)").fill(token);
  await page.getByRole("button", { name: "Attach" }).click();
  await page.locator("#session-id", { hasText: id }).waitFor();
  await idle(page);
}

test("playground: attach to a floe-server session, run with approvals, answer on screen, Stop aborts", { timeout: 240_000 }, async (t) => {
  const base = await start("--delay", "1ms", "--token", "tok");
  const id = await create(base, "tok");
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  try {
    await page.goto(baseURL() + "/static/?pace=0");
    await idle(page);
    await attach(page, base, id, "tok");
    assert.match(await page.locator("#model-label").innerText(), /remote/);
    assert.ok(await page.locator("#compact").isDisabled(), "Compact is not offered for a remote session");

    await page.fill("#prompt", "Count the lines of main.go");
    await page.press("#prompt", "Enter");
    await askCard(page, "list_files").locator('button[data-decision="allow"]').click({ timeout: RUN });
    // Steering from the composer while the run waits for its next approval.
    await askCard(page, "count_lines").waitFor({ timeout: RUN });
    assert.equal(await page.locator("#send").innerText(), "Steer");
    await page.fill("#prompt", "mention the tests");
    await page.press("#prompt", "Enter");
    await page.locator('.chip:text("queued: mention the tests")').waitFor();
    await askCard(page, "count_lines").locator('button[data-decision="allow"]').click({ timeout: RUN });
    await page.locator("#transcript > .msg.prompt", { hasText: "Count the lines of main.go" }).waitFor({ timeout: RUN });
    await idle(page);
    const reply = await page.locator('#transcript > .msg.text[data-kind="text"] .body').last().innerText();
    assert.match(reply, /main\.go/, "the answer is on screen");
    assert.match(reply, /You added: “mention the tests”/, "the steering reached the remote model");
    await page.locator('.msg.user .label:text("steering · delivered to the model")').waitFor();
    assert.equal(await page.locator("#transcript .card .tool-name", { hasText: "count_lines" }).count(), 1);

    // The server holds the run's messages: its history matches the page.
    const hist = await (await fetch(`${base}/api/sessions/${id}/messages`, { headers: { Authorization: "Bearer tok" } })).json();
    const last = hist.messages.filter((m) => m.payload.type === "text" && m.payload.role === "assistant").at(-1);
    const words = (t) => t.replace(/[`*]|^- /gm, "").split(/\s+/).filter(Boolean).join(" ");
    assert.equal(words(reply), words(last.payload.text), "the page shows the server's answer (rendered as Markdown)");

    // Stop while an approval waits: the server aborts the run.
    await page.fill("#prompt", "Count the lines of README.md");
    await page.press("#prompt", "Enter");
    await askCard(page, "list_files").waitFor({ timeout: RUN });
    await page.click("#stop");
    await idle(page);
    const after = await (await fetch(`${base}/api/sessions/${id}/messages`, { headers: { Authorization: "Bearer tok" } })).json();
    assert.equal(after.state, "idle");
    assert.ok(after.messages.some((m) => m.payload.type === "abort"), "the remote run was aborted");

    // A second page attached to the same session sees its history.
    const other = await ctx.newPage();
    await other.goto(baseURL() + "/static/?pace=0");
    await idle(other);
    await attach(other, base, id, "tok");
    await other.locator("#transcript > .msg.prompt", { hasText: "Count the lines of README.md" }).waitFor();
    assert.equal(await other.locator("#transcript > .msg.prompt").count(), 2);

    assert.equal(await page.locator("#sessions li", { hasText: id }).count(), 0, "the page stores nothing of a remote session");
    const bad = log.filter((l) => l.startsWith("page error") || l.startsWith("console.error") || l.includes("Playground error"));
    assert.deepEqual(bad, [], "errors in the page" + explain(log));
  } catch (e) {
    const file = join(process.env.FLOE_SCREENSHOT_DIR || tmpdir(), "playground-remote.png");
    await page.screenshot({ path: file }).catch(() => {});
    console.error(`(screenshot of the failure: ${file})` + explain(log));
    throw e;
  }
});
