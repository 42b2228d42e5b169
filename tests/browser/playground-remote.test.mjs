// The playground attached to a session hosted by the native session server
// (cmd/floe-server, its scripted model): the Remote session form, the
// session's history, a prompt, the approvals on the page (each answered
// once), steering, the answer on screen, Stop → abort, detaching and
// attaching again after a reload; a wrong token and a server that does not
// answer each give a clear message.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:net";
import { createServer as createHTTPServer } from "node:http";
import { baseURL, explain, launch, page as firstPage, ROOT } from "./harness.mjs";
import { connect } from "../../static/connect.mjs";
import { floeServer } from "../floe-server.mjs";

const RUN = 60_000;
const server = floeServer("floe-pg-remote-");

// start runs floe-server on a free port, allowing the playground's origin.
const start = (...args) => server.start("--dir", ":memory:", "--origin", baseURL(), ...args);

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

// fill opens the Remote session form and fills it in.
async function fill(page, base, id, token) {
  if (!(await page.locator("details.remote").evaluate((d) => d.open))) await page.locator(".remote summary").click();
  await page.getByLabel("Server URL").fill(base);
  await page.getByLabel("Session id").fill(id);
  await page.getByLabel("Token (optional)").fill(token);
  await page.getByRole("button", { name: "Attach", exact: true }).click();
}

async function attach(page, base, id, token) {
  await fill(page, base, id, token);
  await page.locator("#remote-status", { hasText: "Attached to " + id }).waitFor();
  await page.locator("#session-id", { hasText: id }).waitFor();
  await idle(page);
}

// decisions counts the approval decisions the page sends, by tool call id.
function decisions(page) {
  const byCall = new Map();
  page.on("request", (r) => {
    const m = r.method() === "POST" && r.url().match(/\/approvals\/([^/?]+)$/);
    if (m) byCall.set(decodeURIComponent(m[1]), (byCall.get(decodeURIComponent(m[1])) ?? 0) + 1);
  });
  return byCall;
}

// closedPort is a loopback port nothing listens on.
async function closedPort() {
  const srv = createServer();
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

const pageErrors = (log) => log.filter((l) => l.startsWith("page error") || l.startsWith("console.error") || l.includes("Playground error"));

test("playground: attach to a floe-server session, run with approvals, answer on screen, Stop aborts", { timeout: 240_000 }, async (t) => {
  const base = await start("--delay", "1ms", "--token", "tok");
  const id = await create(base, "tok");
  // History from before the page: a run another client drove.
  const other = connect(base, id, { token: "tok" });
  for await (const m of other.run("Count the lines of go.mod", { approve: () => "allow" })) void m;
  other.close();
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  const sent = decisions(page);
  try {
    await page.goto(baseURL() + "/static/?pace=0");
    await idle(page);
    await attach(page, base, id, "tok");
    await page.locator("#transcript > .msg.prompt", { hasText: "Count the lines of go.mod" }).waitFor();
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
    assert.equal(await page.locator("#transcript .card .tool-name", { hasText: "count_lines" }).count(), 2, "one count_lines card per run");
    assert.equal(await page.locator("#transcript > .card.ask").count(), 0, "no approval card is left asking");

    // The server holds the run's messages: its history matches the page.
    const hist = await (await fetch(`${base}/api/sessions/${id}/messages`, { headers: { Authorization: "Bearer tok" } })).json();
    const calls = hist.messages.filter((m) => m.payload.type === "approval_decision").map((m) => m.payload.tool_call_id);
    const mine = calls.slice(-2); // the page's run: list_files, count_lines
    assert.deepEqual(
      mine.map((c) => sent.get(c)),
      [1, 1],
      `the page sent one decision per approval (sent: ${JSON.stringify([...sent])})`,
    );
    assert.deepEqual([...sent.keys()].sort(), [...mine].sort(), "and none for any other call");
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

    assert.equal(await page.locator("#sessions li", { hasText: id }).count(), 0, "the page stores nothing of a remote session");

    // New session detaches; after a reload the form offers the same
    // server and session again (not the token), and attaching shows the
    // whole history.
    await page.click("#reset");
    await page.locator("#remote-status", { hasText: "Detached from " + id }).waitFor();
    await page.waitForFunction((id) => document.getElementById("session-id").textContent !== id, id);
    await idle(page);
    await page.reload();
    await idle(page);
    await page.locator(".remote summary").click();
    assert.equal(await page.getByLabel("Server URL").inputValue(), base);
    assert.equal(await page.getByLabel("Session id").inputValue(), id);
    assert.equal(await page.getByLabel("Token (optional)").inputValue(), "", "the token is not kept");
    await attach(page, base, id, "tok");
    await page.locator("#transcript > .msg.prompt", { hasText: "Count the lines of README.md" }).waitFor();
    assert.equal(await page.locator("#transcript > .msg.prompt").count(), 3, "every prompt of the session, from history");
    assert.ok((await page.locator("#transcript > .card.ask").count()) === 0);

    assert.deepEqual(pageErrors(log), [], "errors in the page" + explain(log));
  } catch (e) {
    const file = join(process.env.FLOE_SCREENSHOT_DIR || tmpdir(), "playground-remote.png");
    await page.screenshot({ path: file }).catch(() => {});
    console.error(`(screenshot of the failure: ${file})` + explain(log));
    throw e;
  }
});

test("playground on a phone: a remote session attached from the sessions drawer closes it, as an open does", { timeout: 120_000 }, async (t) => {
  // The form is in the drawer: it stayed open over the session attached.
  const base = await start("--delay", "1ms", "--token", "t");
  const id = await create(base, "t");
  const { ctx, log } = await launch(t, { context: { viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true } });
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/static/?pace=0");
  await idle(page);
  await page.click("#toggle-sessions");
  await page.locator('body[data-drawer="sessions"]').waitFor();
  await fill(page, base, id, "t");
  await page.waitForFunction((id) => document.getElementById("session-id").textContent === id, id); // not shown on a phone
  await page.locator('body[data-drawer=""]').waitFor();
  await idle(page);
  assert.equal(await page.evaluate(() => document.querySelector("[inert]")?.id ?? ""), "", "the page is inert");
  assert.deepEqual(pageErrors(log), [], "errors in the page" + explain(log));
});

test("playground: a wrong token and a server that does not answer each say what to check", { timeout: 120_000 }, async (t) => {
  const base = await start("--delay", "1ms", "--token", "right");
  const id = await create(base, "right");
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  try {
    await page.goto(baseURL() + "/static/?pace=0");
    await idle(page);
    const local = await page.locator("#session-id").innerText();

    await fill(page, base, id, "wrong");
    await page.locator("#remote-status", { hasText: "refused the token (401 unauthorized)" }).waitFor();
    assert.equal(await page.locator("#session-id").innerText(), local, "the page stays on its local session");

    await fill(page, base, "session-none", "right");
    await page.locator("#remote-status", { hasText: "has no session session-none" }).waitFor();

    const dead = `http://127.0.0.1:${await closedPort()}`;
    await fill(page, dead, id, "right");
    await page.locator("#remote-status", { hasText: `No answer from ${dead}: is floe-server running there` }).waitFor();
    assert.match(await page.locator("#remote-status").innerText(), new RegExp(`--origin ${baseURL().replace(/[.:/]/g, "\\$&")}`));

    // Plain HTTP to another machine: floe-serve's policy would block it; the
    // page says so without trying.
    await fill(page, "http://10.255.255.1:8787", id, "right");
    await page.locator("#remote-status", { hasText: "Content-Security-Policy blocks http://10.255.255.1:8787" }).waitFor();

    // Not a URL: the browser's form check refuses it before any request.
    await fill(page, "not a url", id, "");
    assert.equal(await page.getByLabel("Server URL").evaluate((el) => el.validity.typeMismatch), true);
    assert.equal(await page.locator("#session-id").innerText(), local);

    // The only errors are the browser's own lines for the refused requests.
    const bad = pageErrors(log).filter((l) => !/^console\.error: Failed to load resource: (the server responded with a status of (401|404)|net::ERR_CONNECTION_REFUSED)/.test(l));
    assert.deepEqual(bad, [], "errors in the page" + explain(log));
  } catch (e) {
    const file = join(process.env.FLOE_SCREENSHOT_DIR || tmpdir(), "playground-remote-errors.png");
    await page.screenshot({ path: file }).catch(() => {});
    console.error(`(screenshot of the failure: ${file})` + explain(log));
    throw e;
  }
});

test("playground: a proxy whose Floe server is down (502 with an HTML page) is named as such, without its HTML", { timeout: 120_000 }, async (t) => {
  // The proxy adds CORS headers of its own (an nginx add_header … always):
  // without them the page could not read its 502, only a network error.
  const html = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>";
  const paths = [];
  const proxy = createHTTPServer((req, res) => {
    paths.push(req.method + " " + req.url);
    res.writeHead(502, { "Content-Type": "text/html", "Access-Control-Allow-Origin": "*" });
    res.end(html);
  });
  await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
  t.after(() => new Promise((r) => proxy.close(r)));
  const base = `http://127.0.0.1:${proxy.address().port}`;
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/static/?pace=0");
  await idle(page);
  await fill(page, base, "session-x", "");
  const want = `The proxy at ${base} answers 502 (Bad Gateway) but the Floe server behind it does not: is floe-server running, and is the proxy pointed at it?`;
  await page.locator("#remote-status", { hasText: "answers 502" }).waitFor();
  assert.equal(await page.locator("#remote-status").innerText(), want, explain(log));
  assert.deepEqual(paths, ["GET /api/sessions/session-x/messages"]);
  const bad = pageErrors(log).filter((l) => !/^console\.error: Failed to load resource: the server responded with a status of 502/.test(l));
  assert.deepEqual(bad, [], "errors in the page" + explain(log));
});

test("playground: a remote send the server refuses (another client's task) or cannot take (the server is gone) keeps the prompt and says why; the next send that works clears it", { timeout: 180_000 }, async (t) => {
  const base = await start("--delay", "1ms", "--token", "tok");
  const id = await create(base, "tok");
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  const other = connect(base, id, { token: "tok" });
  t.after(() => other.close());
  try {
    await page.goto(baseURL() + "/static/?pace=0");
    await idle(page);
    await attach(page, base, id, "tok");

    // Another client's task waits for an approval it never answers.
    const busy = other.run("Count the lines of go.mod")[Symbol.asyncIterator]();
    await busy.next(); // it runs
    const prompt = "Count the lines of main.go";
    await page.fill("#prompt", prompt);
    await page.press("#prompt", "Enter");
    await page.locator("#note", { hasText: "Not sent:" }).waitFor({ timeout: RUN });
    assert.match(await page.locator("#note").innerText(), new RegExp(`a task of another client is running on ${id}`));
    assert.equal(await page.inputValue("#prompt"), prompt, "the prompt was lost");
    assert.equal(await page.locator("#error").isVisible(), false, "a page error banner for a busy server");
    await idle(page);

    // That task ends; the same prompt, sent again, runs; the note goes.
    await other.abort();
    while (!(await busy.next()).done);
    await page.press("#prompt", "Enter");
    await askCard(page, "list_files").locator('button[data-decision="allow"]').click({ timeout: RUN });
    await askCard(page, "count_lines").locator('button[data-decision="allow"]').click({ timeout: RUN });
    await idle(page);
    assert.equal(await page.locator("#note").innerText(), "");
    assert.equal(await page.inputValue("#prompt"), "");
    assert.match(await page.locator('#transcript > .msg.text[data-kind="text"] .body').last().innerText(), /main\.go/);

    // The server is gone: the prompt stays, the note says what to check.
    for (const p of server.servers) p.kill("SIGKILL");
    await page.fill("#prompt", "echo: anyone there?");
    await page.press("#prompt", "Enter");
    await page.locator("#note", { hasText: `Not sent: No answer from ${base}` }).waitFor({ timeout: RUN });
    assert.equal(await page.inputValue("#prompt"), "echo: anyone there?");
    assert.equal(await page.locator("#error").isVisible(), false, "a page error banner for a server that is gone");
    await idle(page);

    const bad = pageErrors(log).filter((l) => !/^console\.error: Failed to load resource: (the server responded with a status of 409|net::ERR_CONNECTION_REFUSED|net::ERR_EMPTY_RESPONSE|net::ERR_INCOMPLETE_CHUNKED_ENCODING)/.test(l));
    assert.deepEqual(bad, [], "errors in the page" + explain(log));
  } catch (e) {
    const file = join(process.env.FLOE_SCREENSHOT_DIR || tmpdir(), "playground-remote-send.png");
    await page.screenshot({ path: file }).catch(() => {});
    console.error(`(screenshot of the failure: ${file})` + explain(log));
    throw e;
  }
});

test("playground: a remote session takes images with a prompt and with steering; a request past the server's 1 MiB is not sent, and says why", { timeout: 240_000 }, async (t) => {
  const base = await start("--delay", "1ms", "--token", "tok");
  const id = await create(base, "tok");
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  const posts = [];
  page.on("request", (r) => {
    if (r.method() === "POST" && /\/(tasks|steer)$/.test(r.url())) posts.push(r.url().split("/").at(-1));
  });
  // paste attaches an image file of size bytes (a PNG's head, then zeros).
  const paste = (name, size = 0) =>
    page.evaluate(
      ([name, size]) => {
        const png = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="), (c) => c.charCodeAt(0));
        const bytes = new Uint8Array(Math.max(size, png.length));
        bytes.set(png);
        const dt = new DataTransfer();
        dt.items.add(new File([bytes], name, { type: "image/png" }));
        document.getElementById("prompt").dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
      },
      [name, size],
    );
  const alts = (scope) => scope.locator("img").evaluateAll((all) => all.map((i) => [i.alt, i.src.slice(0, 22)]));
  try {
    await page.goto(baseURL() + "/static/?pace=0");
    await idle(page);
    await attach(page, base, id, "tok");

    // Too big for the server (a 900 KB file is a data: URL of 1.1 MiB): not sent.
    await paste("big.png", 900_000);
    await page.locator("#attachments img").waitFor();
    await page.fill("#prompt", "what is this?");
    await page.press("#prompt", "Enter");
    await page.locator("#note", { hasText: "Not sent: with its 1 image(s) the request is 1.1 MiB, over the 1 MiB a Floe server takes; attach fewer or smaller images." }).waitFor();
    assert.equal(await page.inputValue("#prompt"), "what is this?");
    assert.equal(await page.locator("#attachments img").count(), 1, "the images stay attached");
    assert.deepEqual(posts, [], "nothing was posted");
    await page.getByRole("button", { name: "Remove image 1: big.png" }).click();

    // A prompt with an image: drawn with the prompt the server echoes.
    await paste("shot.png");
    await page.locator("#attachments img").waitFor();
    await page.fill("#prompt", "Count the lines of main.go");
    await page.press("#prompt", "Enter");
    const prompt = page.locator("#transcript > .msg.prompt", { hasText: "Count the lines of main.go" });
    await prompt.locator("img").waitFor({ timeout: RUN });
    assert.deepEqual(await alts(prompt), [["Image 1 of 1 sent with the prompt", "data:image/png;base64,"]]);
    assert.equal(await page.locator("#attachments").isHidden(), true);
    await askCard(page, "list_files").locator('button[data-decision="allow"]').click({ timeout: RUN });

    // Steering with an image while the run waits for its next approval.
    await askCard(page, "count_lines").waitFor({ timeout: RUN });
    await paste("instead.png");
    await page.locator("#attachments img").waitFor();
    await page.fill("#prompt", "look at this instead");
    await page.press("#prompt", "Enter");
    await page.locator('.chip:text("queued: look at this instead + 1 image(s)")').waitFor();
    await askCard(page, "count_lines").locator('button[data-decision="allow"]').click({ timeout: RUN });
    await idle(page);
    const reply = await page.locator('#transcript > .msg.text[data-kind="text"] .body').last().innerText();
    assert.match(reply, /You added: “look at this instead” with an image\./, "the remote model got the image with the steering");
    const steering = page.locator("#transcript > .msg.user", { has: page.locator('.label:text("steering · delivered to the model")') });
    assert.deepEqual(await alts(steering), [["Image 1 of 1 sent with the steering", "data:image/png;base64,"]]);
    assert.deepEqual(posts, ["tasks", "steer"]);

    // The server holds them where they were sent.
    const hist = await (await fetch(`${base}/api/sessions/${id}/messages`, { headers: { Authorization: "Bearer tok" } })).json();
    const user = hist.messages.filter((m) => m.payload.role === "user" && m.payload.type !== "tool_call_output").map((m) => m.payload.type + ":" + (m.payload.text ?? m.payload.image_url.slice(0, 22)));
    assert.deepEqual(user, [
      "text:Count the lines of main.go",
      "image_url:data:image/png;base64,",
      "text:[user_steering]\nlook at this instead\n[/user_steering]",
      "image_url:data:image/png;base64,",
    ]);
    assert.deepEqual(pageErrors(log), [], "errors in the page" + explain(log));
  } catch (e) {
    const file = join(process.env.FLOE_SCREENSHOT_DIR || tmpdir(), "playground-remote-images.png");
    await page.screenshot({ path: file }).catch(() => {});
    console.error(`(screenshot of the failure: ${file})` + explain(log));
    throw e;
  }
});
