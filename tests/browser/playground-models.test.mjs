// The playground page, as in playground.test.mjs, with real providers on
// loopback servers: OpenAI-compatible, the Responses API, Anthropic and
// Gemini's switch; keys, reasoning efforts, subagents, chat templates and
// system prompts in Settings.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { baseURL } from "./harness.mjs";
import { corpusDir, replayServer, writeResponse, anthropicStream, SSE_HEADERS } from "../node/replay.mjs";
import { chatServer, closedPort, modelServer } from "./model-servers.mjs";
import { RUN, pageTest, open, idle, send, decide, lastReply, rowOf, shownID, configure, contentText, delegatingServer, think } from "./playground-lib.mjs";

pageTest("playground: a real model through an OpenAI-compatible server; settings kept locally; auth and unreachable-server messages", async (page, ctx, log, t) => {
  const server = await modelServer(t);
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await open(page);
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", key: "sk-local" });
  assert.match(await page.locator("#model-label").innerText(), /OpenAI-compatible server · test-model/);
  await send(page, "Say hello");
  await idle(page);
  assert.equal(await lastReply(page), "Hello from the server");
  assert.equal(await page.locator("#transcript > .msg.text strong").last().innerText(), "the server");
  assert.match(await page.locator(".request").last().innerText(), /completed · 16 tokens/);
  assert.equal(server.requests.length, 1);
  assert.equal(server.requests[0].auth, "Bearer sk-local");
  assert.equal(server.requests[0].body.model, "test-model");
  assert.ok(server.requests[0].body.tools.some((d) => d.function.name === "write_file"), "the workspace tools are offered");
  const system = server.requests[0].body.messages[0];
  assert.equal(system.role, "system");
  assert.match(system.content, /^You are an agent working in the Floe playground/, "a real model gets the workspace prompt");
  assert.doesNotMatch(system.content, /scripted model/);
  const stored = JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings")));
  assert.deepEqual([stored.provider, stored.baseURL, stored.model, stored.key], ["openai-compatible", url, "test-model", "sk-local"]);
  // Survives a reload.
  await page.reload();
  await idle(page);
  assert.match(await page.locator("#model-label").innerText(), /test-model/);

  // An empty answer: the request says so (the page showed nothing at all).
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "empty", key: "sk-local" });
  await send(page, "Say hello");
  await idle(page);
  assert.match(await page.locator(".request").last().innerText(), /completed · the model answered nothing/);

  // A reply cut at the model's output limit: completed, and a notice says why.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "cut", key: "sk-local" });
  await send(page, "Say hello");
  await idle(page);
  assert.equal(await lastReply(page), "Half a sen");
  assert.match(await page.locator(".request").last().innerText(), /completed/);
  assert.match(await page.locator("#transcript > .notice").last().innerText(), /^The provider cut the reply short \(finish_reason "length"\): a reply at its output-token limit/);

  // A refused key: the request ends "auth", with what to do.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", key: "bad" });
  await send(page, "Say hello");
  await idle(page);
  assert.match(await page.locator(".request").last().innerText(), /auth.*Incorrect API key.*check the API key in Settings/s);

  // A redirect is not followed: the key goes to the configured URL only.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", key: "redirect" });
  await send(page, "Say hello");
  await page.locator(".request .retry .countdown").waitFor({ timeout: RUN });
  await page.locator('.request .retry button:text("Give up")').click();
  await idle(page);
  assert.deepEqual(server.requests.map((r) => r.url).filter((u) => u !== "/v1/chat/completions"), [], "a redirect was followed");
  assert.ok(server.requests.every((r) => r.cookie === undefined), "a request carried cookies");

  // No server (or CORS refused): the message says what to set; Give up ends the retries.
  const closed = await closedPort();
  await configure(page, { provider: "openai-compatible", baseURL: `http://127.0.0.1:${closed}/v1`, model: "m" });
  await send(page, "Say hello");
  await page.locator(".request .retry .countdown").waitFor({ timeout: RUN });
  assert.match(await page.locator(".request").last().innerText(), /no response from http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions.*CORS/s);
  await page.locator('.request .retry button:text("Give up")').click();
  await idle(page);

  // OpenAI with a Base URL (a proxy): the requests go there, with the key.
  const before = server.requests.length;
  await configure(page, { provider: "openai", baseURL: url, model: "gpt-test", key: "sk-proxy" });
  assert.match(await page.locator("#model-label").innerText(), /OpenAI · gpt-test/);
  await send(page, "Say hello");
  await idle(page);
  assert.equal(await lastReply(page), "Hello from the server");
  assert.deepEqual(server.requests.slice(before).map((r) => [r.url, r.auth, r.body.model]), [["/v1/chat/completions", "Bearer sk-proxy", "gpt-test"]]);

  // Back to the scripted demo.
  await configure(page, { provider: "scripted" });
  assert.match(await page.locator("#model-label").innerText(), /scripted demo/);
}, { expected: [/Failed to load resource: the server responded with a status of 401/, /Failed to load resource: net::ERR_CONNECTION_REFUSED/, /Failed to load resource: net::ERR_FAILED/] });

pageTest("playground: a subagent in a real model's session asks the same model, with a subagent's prompt and the file tools only", async (page, ctx, log, t) => {
  const server = await delegatingServer(t);
  await open(page);
  await configure(page, { provider: "openai-compatible", baseURL: `http://127.0.0.1:${server.address().port}/v1`, model: "test-model" });
  await send(page, "Hand the notes to a subagent");
  await decide(page, "subagent", "allow");
  await idle(page);
  assert.equal(await lastReply(page), "The subagent says: The notes hold three files.");
  assert.equal(server.requests.length, 3, "the parent's request, the subagent's, the parent's next");
  const [first, child, next] = server.requests;
  assert.match(contentText(first.messages[0].content), /^You are an agent working in the Floe playground/);
  assert.match(contentText(child.messages[0].content), /^You are a subagent working in the Floe playground/);
  assert.doesNotMatch(contentText(child.messages[0].content), /JavaScript|hand a task/, "the subagent's prompt offers what it lacks");
  assert.equal(child.model, "test-model");
  assert.deepEqual(child.messages.slice(1).map((m) => [m.role, contentText(m.content)]), [["user", "Count the notes."]], "the subagent's context is not fresh");
  assert.deepEqual(child.tools.map((d) => d.function.name), ["list_files", "count_lines", "read_file", "write_file", "edit_file", "delete_file"]);
  assert.ok(first.tools.some((d) => d.function.name === "subagent"), "the parent is offered the subagent tool");
  assert.equal(contentText(next.messages.at(-1).content), "The notes hold three files.");
  // The subagent's answer is shown nested in the call that ran it.
  const card = page.locator("#transcript > .card", { has: page.locator(':scope > .head .tool-name:text-is("subagent")') });
  await card.locator(".subagent", { hasText: "The notes hold three files." }).waitFor();
});

// A key fetch cannot send (an ellipsis of a key shown cut short, a tab
// pasted with it) is refused under its field, the dialog left open,
// never quoting the key: it was saved, and every request then failed
// naming the Authorization header only. A session resumed after Settings
// changed goes on with the model they give now, and says so.
pageTest("playground: Settings refuse a key an HTTP header cannot carry; a session resumed with other Settings names the model it was made with and the one it goes on with", async (page, ctx, log, t) => {
  const server = await modelServer(t);
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await open(page);
  await page.click("#open-settings");
  await page.selectOption("#set-provider", "openai-compatible");
  await page.fill("#set-base-url", url);
  await page.fill("#set-model", "test-model");
  for (const [key, said] of [["sk-proj-ab\u2026", /holds “…” \(U\+2026\) at character 11/], ["sk-lo\tcal", /holds a tab at character 6/]]) {
    await page.fill("#set-key", key);
    await page.click("#settings-save");
    const error = page.locator("#set-key-error", { hasText: said });
    await error.waitFor();
    assert.match(await error.innerText(), /^Settings: the API key holds .*which an HTTP header cannot carry; paste the key again\.$/);
    assert.doesNotMatch(await error.innerText(), /sk-/, "the error shows the key");
    assert.equal(await page.getAttribute("#set-key", "aria-invalid"), "true");
    assert.equal(await page.locator("#settings").isVisible(), true, "the dialog closed on a refused key");
    assert.equal(await page.evaluate(() => localStorage.getItem("floe-playground:settings")), null, "a refused key was saved");
  }
  // Spaces pasted around the model and the key are dropped.
  await page.fill("#set-model", " test-model ");
  await page.fill("#set-key", " sk-local ");
  await page.click("#settings-save");
  await page.locator("#settings").waitFor({ state: "hidden" });
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-key-error").isVisible(), false, "a stale key error");
  await page.click("#settings-cancel");

  // Made with test-model; Settings changed to the scripted demo; reloaded.
  await page.click("#reset");
  await send(page, "Say hello");
  await idle(page);
  assert.deepEqual(server.requests.map((r) => [r.body.model, r.auth]), [["test-model", "Bearer sk-local"]]);
  await configure(page, { provider: "scripted" });
  await page.reload();
  await idle(page);
  // The first session, reopened from the list.
  await page.locator("#sessions li.session .session-open").first().click();
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
  assert.equal(await page.locator("#note").innerText(), "This session was made with OpenAI-compatible server · test-model; it goes on with the scripted demo, as Settings say now.");
  assert.match(await page.locator("#model-label").innerText(), /scripted demo/);
});

// Anthropic through its Messages API (a proxy's base URL): a recorded
// answer with a redacted thinking block, then a tool loop whose thinking
// is not ASCII. A thinking's length is counted in characters (it counted
// bytes), and a thinking the provider keeps to itself says so (it said
// "0 characters"). The key goes in x-api-key, never into the Trace.
pageTest("playground: Anthropic: thinking counted in characters, a redacted one said as such; a tool loop; the key in x-api-key only, never in the Trace", async (page, ctx, log, t) => {
  const recorded = JSON.parse(await readFile(join(corpusDir(), "an_hand_thinking_redacted.json"), "utf8")).response;
  const stream = (body) => ({ status: 200, headers: SSE_HEADERS, body });
  const queue = [
    recorded,
    stream(anthropicStream({ thinking: "先列出文件。", text: ["Looking."], calls: [{ id: "toolu_1", name: "list_files", args: ["{}"] }] })),
    stream(anthropicStream({ text: ["Six files."] })),
  ];
  const server = await replayServer(t, (req, res) => writeResponse(res, queue.shift()), { cors: new URL(baseURL()).origin });
  await open(page);
  await configure(page, { provider: "anthropic", baseURL: server.url + "/v1", model: "claude-test", key: "sk-ant-secret" });
  await send(page, "What is 2+2?");
  await idle(page);
  assert.deepEqual(await page.locator("#transcript > details.thinking summary").allTextContents(), ["thinking · 30 characters", "thinking · not shown by the provider"]);
  assert.equal(await lastReply(page), "4");
  await send(page, "How many files?");
  await decide(page, "list_files", "allow");
  await idle(page);
  assert.equal(await lastReply(page), "Six files.");
  assert.equal(await page.locator("#transcript > details.thinking summary").nth(2).textContent(), "thinking · 6 characters");
  assert.equal(server.requests.length, 3);
  for (const r of server.requests) {
    assert.equal(r.url, "/v1/messages");
    assert.equal(r.headers["x-api-key"], "sk-ant-secret");
    assert.equal(r.headers.authorization, undefined);
  }
  // The redacted block and the thinking go back to the model as they came.
  const sent = JSON.parse(server.requests[2].body).messages;
  assert.deepEqual(sent[1].content.map((b) => b.type), ["thinking", "redacted_thinking", "text"]);
  assert.equal(sent[3].content[0].thinking, "先列出文件。");
  await page.click("#tab-trace");
  await page.locator("#trace li").first().waitFor();
  const stored = await page.evaluate(() => new Promise((resolve, reject) => {
    const req = indexedDB.open("floe-playground");
    req.onerror = () => reject(req.error);
    req.onsuccess = () => {
      const db = req.result;
      const out = [];
      const tx = db.transaction(db.objectStoreNames, "readonly");
      for (const n of db.objectStoreNames) {
        tx.objectStore(n).openCursor().onsuccess = (e) => {
          const c = e.target.result;
          if (!c) return;
          const v = c.value;
          out.push(v instanceof ArrayBuffer || ArrayBuffer.isView(v) ? new TextDecoder().decode(v) : JSON.stringify(v));
          c.continue();
        };
      }
      tx.oncomplete = () => (db.close(), resolve(out.join("\n")));
    };
  }));
  assert.ok(stored.includes("先列出文件"), "the session is not in IndexedDB");
  assert.ok(!stored.includes("sk-ant-secret"), "the key is stored with the session");
});

// The OpenAI Responses API through Settings, with a reasoning effort: a
// recorded tool loop (an encrypted reasoning item and a call of a tool the
// playground lacks, then the answer), each request to /responses with
// store: false and the effort the level maps to ("max" is OpenAI's
// "xhigh"), the reasoning sent back as it came; a compaction goes to the
// same provider and names no effort.
pageTest("playground: the OpenAI Responses API with a reasoning effort: a recorded tool loop, store false, the effort each run; a compaction on the same provider without it", async (page, ctx, log, t) => {
  const recorded = async (name) => JSON.parse(await readFile(join(corpusDir(), name + ".json"), "utf8")).response;
  const call = await recorded("or_rec_reasoning_then_call");
  const answer = await recorded("or_rec_text_after_tools");
  const queue = [call, answer, answer];
  const server = await replayServer(t, (req, res) => writeResponse(res, queue.shift()), { cors: new URL(baseURL()).origin });
  await open(page);
  // Like OpenAI's, the choice needs a key.
  await configure(page, { provider: "openai-responses", model: "gpt-test" });
  await page.locator("#note", { hasText: "Settings: the OpenAI Responses API needs an API key (or a Base URL: a proxy that adds it, a local server)." }).waitFor();
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-gemini-row").isVisible(), false, "the Gemini switch is offered for the Responses API");
  await page.click("#settings-cancel");
  await configure(page, { provider: "openai-responses", baseURL: server.url + "/v1", model: "gpt-test", key: "sk-resp", effort: "max" });
  assert.equal(await page.locator("#model-label").innerText(), "Model: OpenAI Responses API · gpt-test · effort max");
  const stored = JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings")));
  assert.deepEqual([stored.provider, stored.thinkingLevel, stored.gemini], ["openai-responses", "max", false]);
  await send(page, "What is (12+7)*3*10?");
  await decide(page, "calculator", "allow");
  await idle(page);
  assert.equal(await lastReply(page), "The final result is 570.");
  assert.match(await page.locator("#transcript > details.thinking summary").first().textContent(), /^thinking · \d+ characters$/);
  assert.equal(server.requests.length, 2);
  const [first, second] = server.requests.map((r) => JSON.parse(r.body));
  for (const [i, r] of server.requests.entries()) {
    assert.equal(r.url, "/v1/responses");
    assert.equal(r.headers.authorization, "Bearer sk-resp");
    const b = JSON.parse(r.body);
    assert.equal(b.model, "gpt-test");
    assert.equal(b.store, false, `request ${i}: store`);
    assert.deepEqual(b.reasoning, { summary: "auto", effort: "xhigh" }, `request ${i}: reasoning`);
    assert.deepEqual(b.include, ["reasoning.encrypted_content"]);
  }
  assert.match(first.instructions, /^You are an agent working in the Floe playground/);
  assert.ok(first.tools.some((d) => d.name === "write_file"), "the workspace tools are offered");
  // The reasoning item goes back as it came, then the call and its output.
  const encrypted = call.body.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)))
    .find((e) => e.type === "response.output_item.done" && e.item.type === "reasoning").item.encrypted_content;
  const items = second.input;
  assert.deepEqual(items.map((it) => it.type ?? it.role), ["user", "reasoning", "function_call", "function_call_output"]);
  assert.equal(items[1].encrypted_content, encrypted);
  assert.equal(items[2].call_id, "call_AB6AaRZ1FYZB2RwS6A5vbdqn");
  assert.equal(items[3].call_id, "call_AB6AaRZ1FYZB2RwS6A5vbdqn");
  assert.match(items[3].output, /unknown tool "calculator"/);

  // A compaction asks the same provider, with no effort.
  await page.locator("#compact:not([disabled])").waitFor();
  await page.click("#compact");
  await idle(page);
  assert.match(await page.locator("#transcript > details.compact summary").innerText(), /Compaction · completed/);
  assert.equal(server.requests.length, 3);
  const compaction = JSON.parse(server.requests[2].body);
  assert.equal(server.requests[2].url, "/v1/responses");
  assert.equal(compaction.store, false);
  assert.equal(compaction.reasoning, undefined, "a compaction named the effort");
});

// A Base URL (a local server, a proxy that adds the key) needs no key: the
// request goes without an Authorization header. Before, the Responses API,
// OpenAI and Anthropic asked for one whatever the URL, and a user of a
// local server had to type a made-up key.
pageTest("playground: with a Base URL the OpenAI Responses API, OpenAI and Anthropic need no key, and none is sent", async (page, ctx, log, t) => {
  const answer = JSON.parse(await readFile(join(corpusDir(), "or_rec_text_after_tools.json"), "utf8")).response;
  const server = await replayServer(t, (req, res) => writeResponse(res, answer), { cors: new URL(baseURL()).origin });
  await open(page);
  await configure(page, { provider: "openai-responses", baseURL: server.url + "/v1", model: "local-model" });
  assert.equal(await page.locator("#model-label").innerText(), "Model: OpenAI Responses API · local-model");
  await send(page, "Hello");
  await idle(page);
  assert.equal(await lastReply(page), "The final result is 570.");
  assert.equal(server.requests.length, 1);
  assert.equal(server.requests[0].url, "/v1/responses");
  assert.equal(server.requests[0].headers.authorization, undefined, "a key was sent");
  for (const provider of ["openai", "anthropic"]) {
    await configure(page, { provider, baseURL: server.url + "/v1", model: "m" });
    assert.doesNotMatch(await page.locator("#model-label").innerText(), /unavailable/, provider);
  }
});

// The reasoning effort on Chat Completions: sent as reasoning_effort with
// every request of a run, a subagent's included; with the Gemini switch
// (a proxy in front of Google's API) as the level Gemini takes. Settings
// stored by a page without the effort still load; a stored effort the
// page does not offer is refused, said under the composer and under the
// field, and Save then keeps the default.
pageTest("playground: Chat Completions get the reasoning effort on every request, a subagent's too, and Gemini's level with the Gemini switch; older stored settings load, an unknown stored effort is refused", async (page, ctx, log, t) => {
  const server = await delegatingServer(t);
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await open(page);
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", effort: "high" });
  assert.equal(await page.locator("#model-label").innerText(), "Model: OpenAI-compatible server · test-model · effort high");
  await send(page, "Hand the notes to a subagent");
  await decide(page, "subagent", "allow");
  await idle(page);
  assert.equal(await lastReply(page), "The subagent says: The notes hold three files.");
  assert.deepEqual(server.requests.map((b) => b.reasoning_effort), ["high", "high", "high"], "the parent's, the subagent's, the parent's next");

  // Gemini's dialect through a proxy: minimal goes as low, max as high;
  // without the switch, as named ("max" is OpenAI's "xhigh").
  for (const [gemini, effort, sent] of [[true, "minimal", "low"], [true, "max", "high"], [false, "minimal", "minimal"], [false, "max", "xhigh"]]) {
    await page.click("#open-settings");
    await page.selectOption("#set-provider", "anthropic");
    assert.equal(await page.locator("#set-gemini-row").isVisible(), false, "the Gemini switch is offered for Anthropic");
    await page.click("#settings-cancel");
    await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", effort, gemini });
    const before = server.requests.length;
    await send(page, "Hand the notes to a subagent");
    await decide(page, "subagent", "allow");
    await idle(page);
    assert.deepEqual(server.requests.slice(before).map((b) => b.reasoning_effort), [sent, sent, sent], `${effort}, gemini ${gemini}`);
  }
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).gemini, false);

  // Settings stored before the effort and the switch existed.
  const older = { provider: "openai-compatible", baseURL: url, model: "test-model", key: "", compactTokens: 0, compactMode: "summarize" };
  await page.evaluate((s) => localStorage.setItem("floe-playground:settings", JSON.stringify(s)), older);
  await page.reload();
  await idle(page);
  await page.click("#reset");
  assert.equal(await page.locator("#model-label").innerText(), "Model: OpenAI-compatible server · test-model");
  let before = server.requests.length;
  await send(page, "Hand the notes to a subagent");
  await decide(page, "subagent", "allow");
  await idle(page);
  assert.deepEqual(server.requests.slice(before).map((b) => "reasoning_effort" in b), [false, false, false], "an effort was sent by default");

  // A stored effort the page does not offer: refused, said where it shows.
  await page.evaluate((s) => localStorage.setItem("floe-playground:settings", JSON.stringify(s)), { ...older, thinkingLevel: "ultra" });
  await page.reload();
  await idle(page);
  await page.click("#reset");
  assert.match(await page.locator("#model-label").innerText(), /scripted demo \(OpenAI-compatible server unavailable\)/);
  const said = "Settings: the reasoning effort “ultra” is not one the page offers; choose default, minimal, low, medium, high or max.";
  await page.locator("#note", { hasText: said }).waitFor();
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-effort-error").innerText(), said);
  assert.equal(await page.getAttribute("#set-effort", "aria-invalid"), "true");
  assert.equal(await page.inputValue("#set-effort"), "");
  await page.click("#settings-save");
  await page.locator("#settings").waitFor({ state: "hidden" });
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).thinkingLevel, "");
  await page.click("#reset");
  assert.equal(await page.locator("#model-label").innerText(), "Model: OpenAI-compatible server · test-model");
  // One put in the select otherwise is refused under the field at Save.
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-effort-error").isVisible(), false, "a stale effort error");
  await page.evaluate(() => {
    const o = document.createElement("option");
    o.value = o.textContent = "extreme";
    document.getElementById("set-effort").append(o);
  });
  await page.selectOption("#set-effort", "extreme");
  await page.click("#settings-save");
  await page.locator("#set-effort-error", { hasText: "the reasoning effort “extreme” is not one the page offers" }).waitFor();
  assert.equal(await page.locator("#settings").isVisible(), true, "the dialog closed on a refused effort");
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).thinkingLevel, "");
});

// A chat template that opens the thinking (DeepSeek-R1's, QwQ's: the
// prompt ends in <think>) has the reply "reasoning…</think>answer":
// Settings say so for the OpenAI adapters, kept with the others, and the
// reply shows as thinking, then text, through Chat Completions and the
// Responses API; without it, all text.
pageTest("playground: a chat template that opens the thinking: Settings say so, kept; the reply is thinking until its </think>", async (page, ctx, log, t) => {
  const reply = "Okay, the user greets me.</think>\n\nHi there.";
  const server = await chatServer(t, (server, req, body, res, sse) => {
    server.requests.push(req.url);
    res.writeHead(200, { ...sse.cors, "content-type": "text/event-stream" });
    if (req.url.endsWith("/responses")) {
      const ev = (o) => `data: ${JSON.stringify(o)}\n\n`;
      res.write(ev({ type: "response.output_text.delta", output_index: 0, content_index: 0, delta: reply.slice(0, 20) }));
      res.write(ev({ type: "response.output_text.delta", output_index: 0, content_index: 0, delta: reply.slice(20) }));
      return res.end(ev({ type: "response.completed", response: { status: "completed", output: [], usage: { input_tokens: 12, output_tokens: 4, total_tokens: 16 } } }));
    }
    res.write(sse({ choices: [{ index: 0, delta: { role: "assistant", content: reply.slice(0, 20) }, finish_reason: null }] }));
    res.write(sse({ choices: [{ index: 0, delta: { content: reply.slice(20) }, finish_reason: "stop" }] }));
    sse.end(res);
  });
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await open(page);
  await page.click("#open-settings");
  for (const [provider, shown] of [["openai-compatible", true], ["openai", true], ["openai-responses", true], ["anthropic", false], ["scripted", false]]) {
    await page.selectOption("#set-provider", provider);
    assert.equal(await page.locator("#set-opened").isVisible(), shown, provider);
  }
  assert.equal(await page.isChecked("#set-opened"), false, "off by default");
  await page.click("#settings-cancel");

  const thinking = () => page.locator("#transcript > details.thinking");
  for (const provider of ["openai-compatible", "openai-responses"]) {
    await configure(page, { provider, baseURL: url, model: "qwq", opened: true });
    assert.match(await page.locator("#model-label").innerText(), /qwq · starts in thinking$/);
    await send(page, "Hello.");
    await idle(page);
    assert.equal(await lastReply(page), "Hi there.", provider);
    assert.equal(await thinking().count(), 1, provider);
    assert.match(await thinking().textContent(), /Okay, the user greets me\.$/, provider);
  }
  assert.deepEqual(server.requests, ["/v1/chat/completions", "/v1/responses"]);
  // Kept with the other settings: a reload shows it ticked.
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).startsInThinking, true);
  await page.reload();
  await idle(page);
  await page.click("#open-settings");
  assert.equal(await page.isChecked("#set-opened"), true, "the setting is not kept");
  await page.click("#settings-cancel");

  // Unticked: the reply is all text, </think> and all.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "qwq", opened: false });
  assert.doesNotMatch(await page.locator("#model-label").innerText(), /starts in thinking/);
  await send(page, "Hello.");
  await idle(page);
  assert.equal(await thinking().count(), 0);
  assert.match(await lastReply(page), /^Okay, the user greets me\.<\/think>\s+Hi there\.$/);
});

// The system prompt of a new real-model session is Settings'; a session
// keeps the prompt it was made with (a resume reads it from its Trace's
// session_meta, ENGINE.md E-17.1), whatever Settings say later, and the
// Settings dialog shows the prompt of the session shown.
pageTest("playground: Settings give a new session's system prompt; a session reopened keeps its own; the dialog shows the prompt of the session shown", async (page, ctx, log, t) => {
  const server = await modelServer(t);
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await open(page);
  await page.click("#open-settings");
  assert.match(await page.locator("#set-current-prompt").textContent(), /^You are the Floe playground's scripted model/);
  await page.selectOption("#set-provider", "openai-compatible");
  assert.match(await page.getAttribute("#set-system-prompt", "placeholder"), /^You are an agent working in the Floe playground/);
  await page.click("#settings-cancel");

  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", systemPrompt: "Answer in French." });
  const french = await shownID(page);
  await send(page, "Say hello");
  await idle(page);
  assert.deepEqual(server.requests.at(-1).body.messages[0], { role: "system", content: "Answer in French." });
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).systemPrompt, "Answer in French.");

  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", systemPrompt: "Answer in German." });
  await send(page, "Say hello");
  await idle(page);
  assert.equal(server.requests.at(-1).body.messages[0].content, "Answer in German.");
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-current-prompt").textContent(), "Answer in German.");
  await page.click("#settings-cancel");

  // The first session, reopened (after a reload too), keeps its own.
  await page.reload();
  await idle(page);
  await rowOf(page, french).locator(".session-open").click();
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
  await send(page, "Again");
  await idle(page);
  assert.equal(server.requests.at(-1).body.messages[0].content, "Answer in French.");
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-current-prompt").textContent(), "Answer in French.");
  assert.equal(await page.inputValue("#set-system-prompt"), "Answer in German.", "Settings keep the prompt for new sessions");
  // Emptied: the playground's own prompt again.
  await page.fill("#set-system-prompt", "  ");
  await page.click("#settings-save");
  await page.locator("#settings").waitFor({ state: "hidden" });
  await page.click("#reset");
  await send(page, "Say hello");
  await idle(page);
  assert.match(server.requests.at(-1).body.messages[0].content, /^You are an agent working in the Floe playground/);
});
