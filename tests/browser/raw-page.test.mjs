// The README's page of its own ("From curl or a page of your own"), as
// written, in a page of another origin than floe-server's: EventSource on
// the stream, fetch for the task and each approval. Run once as written
// and once with EventSource's withCredentials, which an origin --origin
// names may use (before, Chromium refused every answer: no
// Access-Control-Allow-Credentials).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { baseURL, explain, launch, page as firstPage, WAIT } from "./harness.mjs";
import { floeServer } from "../floe-server.mjs";

const server = floeServer("floe-raw-page-");
const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const section = readme.slice(readme.indexOf("### From curl or a page of your own"));
const example = section.match(/```js\n([\s\S]*?)```/)[1];
const API = "http://127.0.0.1:8787/api/sessions/demo";

// The page's stubs, declared ahead of the example: render, confirm and
// reload record what the example does with them; EventSource is the
// browser's, recording the server events and, with credentials, opened so.
const stubs = (credentials) => `
window.rendered = []; window.asked = []; window.events = []; window.reloads = 0;
const render = (m) => window.rendered.push(m);
const confirm = (q) => (window.asked.push(q), true);
const reload = () => window.reloads++;
const EventSource = class extends window.EventSource {
  constructor(url, init) {
    super(url, ${credentials} ? { ...init, withCredentials: true } : init);
    window.stream = this;
    this.addEventListener("server_event", (e) => window.events.push(JSON.parse(e.data)));
  }
};
`;

async function create(base, id) {
  const resp = await fetch(base + "/api/sessions", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ id }) });
  assert.equal(resp.status, 201);
}

test("the README's page of its own runs a task and approves its calls from another origin, with and without credentials", { timeout: 120_000 }, async (t) => {
  assert.ok(example.includes(API), `the example names ${API}`);
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/tests/browser/fixtures/connect.html");
  const base = await server.start("--dir", ":memory:", "--origin", baseURL(), "--delay", "1ms");
  for (const credentials of [false, true]) {
    const id = credentials ? "with-credentials" : "demo";
    await create(base, id);
    await page.addScriptTag({ type: "module", content: stubs(credentials) + example.replace(API, `${base}/api/sessions/${id}`) });
    // The run's end: a task_state running, then idle.
    await page
      .waitForFunction(() => {
        const states = window.events.filter((e) => e.type === "task_state").map((e) => e.state);
        return states.includes("running") && states.lastIndexOf("idle") > states.indexOf("running");
      }, null, { timeout: WAIT })
      .catch((e) => assert.fail(`${id}: the run did not end: ${e.message}${explain(log)}`));
    const seen = await page.evaluate(() => {
      window.stream.close();
      return { asked: window.asked, rendered: window.rendered.map((m) => m.payload.type), reloads: window.reloads };
    });
    assert.ok(seen.asked.length > 0, `${id}: no approval was asked`);
    assert.ok(seen.rendered.includes("tool_call_output") && seen.rendered.includes("request_end"), `${id}: rendered ${seen.rendered}`);
    assert.equal(seen.reloads, 0);
    const hist = await (await fetch(`${base}/api/sessions/${id}/messages`)).json();
    assert.equal(hist.state, "idle");
    const calls = hist.messages.filter((m) => m.payload.type === "tool_call");
    const done = hist.messages.filter((m) => m.payload.type === "tool_call_output" && m.payload.stop_reason === "completed");
    assert.equal(calls.length, seen.asked.length, `${id}: each call asked once`);
    assert.equal(done.length, calls.length, `${id}: each call allowed and run`);
  }
});
