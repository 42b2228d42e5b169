// The playground page, as in playground.test.mjs: the transcript's
// following of its end, the Stream panel, images, local storage that
// refuses, imports and exports, demo scripts and the workspace without
// OPFS.
import assert from "node:assert/strict";
import { mkdtemp, writeFile, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { baseURL, WAIT } from "./harness.mjs";
import { replayServer, writeResponse, anthropicStream, SSE_HEADERS } from "../node/replay.mjs";
import { modelServer } from "./model-servers.mjs";
import { RUN, pageTest, open, storedPrompt, idle, showSessions, send, askCard, decide, lastReply, rowOf, shownID, otherSession, configure, say, think, ended, callTool, paragraphs, pageModel, gapOf, scrollTop, userScroll, pushed, atEnd, frames, raceAt, endStream, followedRace, holdCompletions } from "./playground-lib.mjs";

// A page with nothing to do renders nothing: a render asks for the next
// animation frame to scroll, and that frame's work was followed by a
// render, which asked for the next, so an idle page rendered at every
// frame (its state, buttons and panels set again: about 15 times a
// second here, and a core's tenth). Counted by the page's asks for a
// frame: one a render; a Markdown drawing set for later (its cost's
// throttle) may still come once after the reply.
pageTest("playground: an idle page does not render at every animation frame", async (page) => {
  await open(page);
  await send(page, "stream 20");
  await idle(page);
  const asks = await page.evaluate(() => new Promise((resolve) => {
    const frame = window.requestAnimationFrame.bind(window);
    let asked = 0;
    window.requestAnimationFrame = (f) => {
      asked++;
      return frame(f);
    };
    let n = 60;
    const next = () => {
      if (--n > 0) return frame(next);
      // The last frame's posted work, had there been any, is run before
      // a task queued after it.
      setTimeout(() => resolve(asked));
    };
    frame(next);
  }));
  assert.ok(asks <= 3, `the idle page asked for ${asks} of 60 animation frames`);
});

// While a reply streams, a render draws its deltas and nothing else: the
// page's state, its buttons, the token count, the steering queue and the
// note are set when they change, not again at each delta (a dozen calls
// into the page each, about a third of a render's own time).
pageTest("playground: the controls are not drawn again at each delta of a streaming reply", async (page) => {
  await open(page, "/static/?pace=0.05");
  await send(page, "stream 400");
  const seen = await page.evaluate(() => new Promise((resolve) => {
    const words = () => (document.querySelector("#transcript > .msg.text:last-of-type .body")?.textContent || "").split(/\s+/).filter(Boolean).length;
    const ids = ["state", "tokens", "reset", "steer-queue", "composer", "note", "toggle-sessions", "toggle-side"];
    const records = [];
    const controls = new MutationObserver((rs) => records.push(...rs));
    let started = false;
    const reply = new MutationObserver(() => {
      const n = words();
      if (!started && n >= 20) {
        started = true;
        controls.observe(document.body, { attributes: true });
        for (const id of ids) controls.observe(document.getElementById(id), { subtree: true, attributes: true, childList: true, characterData: true });
      } else if (started && n >= 150) {
        reply.disconnect();
        records.push(...controls.takeRecords());
        controls.disconnect();
        resolve({ state: document.body.dataset.state, changes: records.map((r) => `${r.type} ${r.target.id || r.target.nodeName}${r.attributeName ? " " + r.attributeName : ""}`) });
      }
    });
    reply.observe(document.getElementById("transcript"), { subtree: true, childList: true, characterData: true });
  }));
  assert.equal(seen.state, "running", "the reply ended before 150 words were drawn");
  assert.deepEqual(seen.changes, [], "the controls were drawn again while the reply streamed");
  await idle(page);
});

// The transcript follows its end while a reply streams, until the user
// scrolls up; back at the end, it follows again. Whether it follows is
// decided by the user's scrolls, and the scroll to the end is made once a
// frame (reading the layout at every render made a long reply quadratic).
pageTest("playground: the transcript follows a streaming reply, not once the user scrolled up, and again at the end", async (page) => {
  // The scripted model streams a word every 1.5 ms at this pace (the
  // browser's timers make it 5 or so): the 1,500 words' stream, some
  // 7,500 px, goes on for some 8 s, most of it after the test has
  // scrolled up.
  await open(page, "/static/?pace=0.05");
  const gap = () => page.evaluate(() => {
    const t = document.getElementById("transcript");
    return t.scrollHeight - t.scrollTop - t.clientHeight;
  });
  const taller = (h) => page.waitForFunction((h) => document.getElementById("transcript").scrollHeight > h, h, { timeout: RUN });
  await send(page, "stream 1500");
  await taller(3000);
  await page.waitForFunction(() => {
    const t = document.getElementById("transcript");
    return t.scrollHeight - t.scrollTop - t.clientHeight < 48;
  }, null, { timeout: RUN });
  await page.evaluate(() => (document.getElementById("transcript").scrollTop = 0));
  const h = await page.evaluate(() => document.getElementById("transcript").scrollHeight);
  await taller(h + 1000);
  assert.ok((await gap()) > 1000, "the transcript scrolled back down after the user scrolled up");
  await idle(page);
  await page.evaluate(() => {
    const t = document.getElementById("transcript");
    t.scrollTop = t.scrollHeight;
  });
  await page.waitForFunction(() => {
    const t = document.getElementById("transcript");
    return t.scrollHeight - t.scrollTop - t.clientHeight < 48;
  });
  const h2 = await page.evaluate(() => document.getElementById("transcript").scrollHeight);
  await send(page, "stream 600");
  await taller(h2 + 1000);
  await page.waitForFunction(() => {
    const t = document.getElementById("transcript");
    return t.scrollHeight - t.scrollTop - t.clientHeight < 48;
  }, null, { timeout: RUN });
  await idle(page);
});

// When a card at the end of the transcript shrinks (a decided approval
// loses its buttons), the browser pulls the view up to the new end at its
// next layout, and sends the scroll event of that at its next frame. If
// the transcript has grown again by then, the view is above the end the
// page scrolled to and not near the new one: the page took that for the
// user's scroll up, and stopped following.
pageTest("playground: the transcript follows its end when a card at the end shrinks and the transcript grows again before the scroll event", async (page) => {
  await open(page);
  await pageModel(page, [say(paragraphs("Before the call", 60)) + callTool("list_files") + ended("tool_calls"), null]);
  await page.setViewportSize({ width: 390, height: 844 }); // a phone's: the approval's buttons take two lines
  await send(page, "Go");
  await askCard(page, "list_files").waitFor({ timeout: RUN });
  await atEnd(page);
  const at = await raceAt(page, "deny", say(paragraphs("After the denial", 30)));
  assert.equal(at.requests, 2, "the denial did not reach the model in the click's task");
  assert.ok(at.shrank > 0 && at.shorter > 0, `the card shrank ${at.shrank} px, the transcript ${at.shorter} px`);
  await followedRace(page, at);
});

// The page's footer getting shorter (here the strip of attached images,
// gone as they are queued with a steer) makes the transcript's view
// taller: the browser pulls it up to the same end, its scroll event as
// late.
pageTest("playground: the transcript follows its end when its view grows taller and the transcript grows again before the scroll event", async (page) => {
  await open(page);
  await pageModel(page, [say(paragraphs("A long answer", 60)) + ended("stop"), null]);
  await send(page, "Go");
  await idle(page);
  await send(page, "Go on");
  await page.waitForFunction(() => window.__model.push);
  await page.evaluate((s) => window.__model.push(s), think("Thinking."));
  await page.locator("#transcript > .msg.thinking").waitFor();
  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");
  await page.setInputFiles("#attach-file", { name: "one.png", mimeType: "image/png", buffer: png });
  await page.locator("#attachments img").waitFor();
  await page.fill("#prompt", "and this");
  await atEnd(page);
  const at = await raceAt(page, "steer", say(paragraphs("The answer", 30)));
  assert.equal(await page.locator("#steer-queue .chip").count(), 1, "the steer was not queued");
  assert.ok(at.taller > 0, `the view did not grow taller (${at.taller} px)`);
  await followedRace(page, at);
});

// A <details> at the end (the thinking streaming) the user closes makes
// the transcript shorter, as a shrinking card does: it does not stop the
// following either. One the user opens there while it follows grows the
// transcript under the view, and the view follows the end.
pageTest("playground: the transcript follows its end when the user closes a thinking block at the end and the transcript grows again before the scroll event", async (page) => {
  await open(page);
  await pageModel(page, [null]);
  await send(page, "Go");
  await page.waitForFunction(() => window.__model.push);
  await page.evaluate((s) => window.__model.push(s), say(paragraphs("Before", 60)) + think(paragraphs("Thinking", 40)));
  const block = page.locator("#transcript > details.msg.thinking");
  await block.waitFor();
  await atEnd(page);
  await block.locator("summary").click();
  assert.equal(await block.evaluate((d) => d.open), true);
  await pushed(page, think("\n\n" + paragraphs("Thinking on", 5)));
  await atEnd(page);
  const at = await raceAt(page, "close", say(paragraphs("The answer", 30)));
  assert.equal(await block.evaluate((d) => d.open), false, "the thinking block did not close");
  assert.ok(at.shorter > 300, `the transcript got ${at.shorter} px shorter only`);
  await followedRace(page, at);
});

// The user's scroll stops the following however it is made: here by a
// script, as a screen reader's, a find in the page's or the focus of an
// element brings what it shows into view; back at the end, the transcript
// follows again, in the same run.
pageTest("playground: a scroll up by other means than a wheel, touch or keys stops the following during a run; back at the end it follows again", async (page) => {
  await open(page);
  await pageModel(page, [null]);
  await send(page, "Go");
  await page.waitForFunction(() => window.__model.push);
  const push = (s) => page.evaluate((s) => window.__model.push(s), s);
  await push(say(paragraphs("Streaming", 60)));
  await atEnd(page);
  const top = await page.evaluate(() => {
    const t = document.getElementById("transcript");
    return new Promise((resolve) => {
      t.addEventListener("scroll", () => resolve(t.scrollTop), { once: true });
      document.querySelector("#transcript > .msg.prompt").scrollIntoView();
    });
  });
  const h = await page.evaluate(() => document.getElementById("transcript").scrollHeight);
  await push(say("\n\n" + paragraphs("More", 30)));
  await page.waitForFunction((h) => document.getElementById("transcript").scrollHeight > h + 500, h);
  await frames(page);
  assert.equal(await page.evaluate(() => document.getElementById("transcript").scrollTop), top, "the transcript scrolled after the user's scroll up");
  assert.ok((await gapOf(page)) > 1000);
  await page.evaluate(() => {
    const t = document.getElementById("transcript");
    return new Promise((resolve) => {
      t.addEventListener("scroll", resolve, { once: true });
      t.scrollTop = t.scrollHeight;
    });
  });
  const h2 = await page.evaluate(() => document.getElementById("transcript").scrollHeight);
  await push(say("\n\n" + paragraphs("Yet more", 30)));
  await page.waitForFunction((h) => document.getElementById("transcript").scrollHeight > h + 500, h2);
  await frames(page);
  assert.ok((await gapOf(page)) < 1, "the transcript did not follow once the user was back at its end");
  await endStream(page);
});

// Only the user's reaching the end starts the following again. A view
// made taller, or a scroll down short of the end to where the page last
// scrolled, once the transcript has grown since, is no such return.
pageTest("playground: the transcript does not follow again when its view grows taller after the user scrolled up", async (page) => {
  await open(page);
  await pageModel(page, [null]);
  await send(page, "Go");
  await page.waitForFunction(() => window.__model.push);
  await pushed(page, say(paragraphs("Streaming", 60)));
  await atEnd(page);
  await frames(page);
  const left = (await scrollTop(page)) - 200;
  assert.equal(await userScroll(page, left), left);
  await pushed(page, say("\n\n" + paragraphs("More", 30)));
  await page.setViewportSize({ width: 1280, height: 1260 });
  await frames(page);
  await pushed(page, say("\n\n" + paragraphs("Yet more", 30)));
  assert.equal(await scrollTop(page), left, "the transcript scrolled once its view grew taller");
  assert.ok((await gapOf(page)) > 1000);
  // A scroll of the user's own after, still short of the end.
  assert.equal(await userScroll(page, left - 10), left - 10);
  await pushed(page, say("\n\n" + paragraphs("Still more", 30)));
  assert.equal(await scrollTop(page), left - 10, "the transcript followed again after the user's scroll up");
  await endStream(page);
});

pageTest("playground: the transcript does not follow again when the user scrolls down to where it last followed, short of its end", async (page) => {
  await open(page);
  await pageModel(page, [null]);
  await send(page, "Go");
  await page.waitForFunction(() => window.__model.push);
  await pushed(page, say(paragraphs("Streaming", 60)));
  await atEnd(page);
  await frames(page);
  const followed = await scrollTop(page);
  assert.equal(await userScroll(page, 0), 0);
  await pushed(page, say("\n\n" + paragraphs("More", 30)));
  assert.equal(await userScroll(page, followed), followed);
  await pushed(page, say("\n\n" + paragraphs("Yet more", 30)));
  assert.equal(await scrollTop(page), followed, "the transcript followed again from short of its end");
  assert.ok((await gapOf(page)) > 1000);
  await endStream(page);
});

// The user's scroll up is in the transcript shown: another session opened
// shows its end and follows its runs, as one opened after no scroll up does.
pageTest("playground: a session opened after the user scrolled up in another shows its end and follows its run", async (page) => {
  await open(page, "/static/?pace=0.05"); // three replies of 400 words, streamed about four times as fast
  await send(page, "stream 400");
  await idle(page);
  const first = await shownID(page);
  await page.click("#reset");
  await otherSession(page, first);
  await send(page, "stream 400");
  await idle(page);
  await atEnd(page);
  assert.equal(await userScroll(page, 0), 0);
  await showSessions(page);
  await rowOf(page, first).locator(".session-open").click();
  await page.waitForFunction((id) => document.getElementById("session-id").textContent === id, first);
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
  await frames(page);
  assert.ok((await gapOf(page)) < 1, `the session opened shows ${await gapOf(page)} px above its end`);
  await send(page, "stream 400");
  await idle(page);
  await frames(page);
  assert.ok((await gapOf(page)) < 1, `the run's reply ended ${await gapOf(page)} px below the view`);
});

pageTest("playground: the Stream panel draws a fragment's deltas as one row, counted, its JSON the last delta's, across its redraws", async (page) => {
  await open(page);
  const words = "one two three four five six seven eight nine ten eleven twelve".split(" ");
  await send(page, "echo: " + words.join(" "));
  await idle(page);
  const rows = await page.evaluate(() =>
    [...document.querySelectorAll("#stream > li")].map((li, i) => ({
      i,
      type: li.querySelector(".type").textContent,
      detail: li.querySelector(".detail").textContent,
    })),
  );
  for (const type of ["partial_thinking", "partial_text"]) {
    const deltas = rows.filter((r) => r.type === type && r.detail.startsWith("delta"));
    assert.deepEqual(deltas.map((r) => r.detail), [`delta ×${words.length}`], type);
    const row = page.locator("#stream > li").nth(deltas[0].i);
    await row.locator("button.row").click();
    assert.equal(await row.locator("button.row").getAttribute("aria-expanded"), "true");
    const p = JSON.parse(await row.locator("pre.json").innerText()).payload;
    assert.equal(p.text ?? p.thinking, words.at(-1), `${type}: the row's JSON is its last delta`);
    await row.locator("button.row").click();
    await row.locator("pre.json").waitFor({ state: "detached" });
    assert.equal(await row.locator("button.row").getAttribute("aria-expanded"), "false");
  }
  const count = await page.locator("#stream-count").textContent();
  assert.ok(Number(count) > 2 * words.length, `the count of messages (${count}) takes in every delta`);
});

pageTest("playground: a tool output's images and a prompt's are drawn from data: URLs, named, in boxes of a fixed size; a remote one is a link, never loaded", async (page, ctx, log) => {
  await open(page);
  const remote = [];
  page.on("request", (r) => {
    if (r.url().includes("images.example")) remote.push(r.url());
  });
  const svg = (w, h, fill) => "data:image/svg+xml;base64," + Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="${w}" height="${h}" fill="${fill}"/></svg>`).toString("base64");
  const wide = svg(800, 200, "teal");
  const tall = svg(100, 600, "tomato");
  const ts = "2026-01-02T00:00:00.000Z";
  const sid = "session-2026-01-02-00-00-00-00aa00aa";
  const lines = [
    { timestamp: ts, type: "session_meta", payload: { session_id: sid, provider: "x", model_id: "m", model_context_window: 1000, system_prompt: "s", agent_state: "m", workspace: "w" } },
    { timestamp: ts, type: "model_msg", payload: { type: "text", role: "user", text: "what is on screen?" } },
    { timestamp: ts, type: "model_msg", payload: { type: "image_url", role: "user", image_url: tall } },
    { timestamp: ts, type: "event_msg", payload: { type: "request_begin" } },
    { timestamp: ts, type: "model_msg", payload: { type: "tool_call", role: "assistant", name: "screenshot", arguments: "{}", tool_call_id: "c1", stop_reason: "completed" } },
    { timestamp: ts, type: "event_msg", payload: { type: "request_end", status: "completed" } },
    { timestamp: ts, type: "event_msg", payload: { type: "approval_decision", decision: "allow", tool_call_id: "c1" } },
    {
      timestamp: ts,
      type: "model_msg",
      payload: { type: "tool_call_output", role: "user", output: "three images", images: [wide, "https://images.example/chart.png", "javascript:alert(1)"], tool_call_id: "c1", stop_reason: "completed" },
    },
  ];
  await page.setInputFiles("#import", { name: "shots.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(lines.map((l) => JSON.stringify(l)).join("\n") + "\n") });
  await page.locator("#note", { hasText: `Imported ${sid}.` }).waitFor();
  await page.locator(`#sessions li[data-session-id="${sid}"] .session-open`).click();
  const card = page.locator("#transcript > .card", { has: page.locator(".tool-name", { hasText: "screenshot" }) });
  await card.waitFor();

  // The prompt's image, with the prompt; the tool's, in its card.
  const prompt = page.locator("#transcript > .msg.prompt");
  assert.equal(await prompt.locator(".body").innerText(), "what is on screen?");
  const imgs = (scope) =>
    scope.locator("img").evaluateAll((all) =>
      all.map((i) => ({ alt: i.alt, loading: i.loading, loaded: i.complete && i.naturalWidth > 0, w: i.getBoundingClientRect().width, h: i.getBoundingClientRect().height, fit: getComputedStyle(i).objectFit })),
    );
  await page.waitForFunction(() => [...document.querySelectorAll("#transcript img")].every((i) => i.complete), null, { timeout: WAIT });
  const shown = [...(await imgs(prompt)), ...(await imgs(card))];
  assert.deepEqual(
    shown.map((i) => [i.alt, i.loading, i.loaded, i.fit]),
    [
      ["Image 1 of 1 sent with the prompt", "lazy", true, "contain"],
      ["Image 1 of 3 from screenshot", "lazy", true, "contain"],
    ],
  );
  // One box for every image, whatever its shape: nothing moves when one loads.
  assert.deepEqual(shown.map((i) => [i.w, i.h]), [[240, 180], [240, 180]]);
  // The remote image: named, a link that says why it is not shown; never fetched.
  const notes = await card.locator(".image-note").allInnerTexts();
  assert.equal(notes.length, 2);
  assert.match(notes[0], /^Image 2 of 3 from screenshot: a remote image, not loaded: this page shows data: images only/);
  const link = card.locator(".image-note a");
  assert.equal(await link.getAttribute("href"), "https://images.example/chart.png");
  assert.equal(await link.getAttribute("rel"), "noopener noreferrer");
  assert.match(notes[1], /^Image 3 of 3 from screenshot: not drawn: not a data: or http\(s\) URL$/);
  assert.equal(await card.locator(".image-note a").count(), 1, "a javascript: URL is not a link");
  assert.deepEqual(remote, [], "the page fetched a remote image");
});

pageTest("playground: a file the model made (an assistant's inline_data) is drawn as a prompt's image when it is one, and saved by its Download button under its name, its bytes as made", async (page, ctx, log, t) => {
  await open(page);
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
  const pdf = Buffer.from("%PDF-1.4\n\x00\xff the card\n").toString("base64");
  const ts = "2026-01-03T00:00:00.000Z";
  const sid = "session-2026-01-03-00-00-00-00bb00bb";
  const made = (mime, data) => ({ timestamp: ts, type: "model_msg", payload: { type: "inline_data", role: "assistant", data, mime_type: mime, stop_reason: "completed" } });
  const lines = [
    { timestamp: ts, type: "session_meta", payload: { session_id: sid, provider: "x", model_id: "m", model_context_window: 1000, system_prompt: "s", agent_state: "m", workspace: "w" } },
    { timestamp: ts, type: "model_msg", payload: { type: "text", role: "user", text: "Draw a cat, and its card." } },
    { timestamp: ts, type: "event_msg", payload: { type: "request_begin" } },
    { timestamp: ts, type: "model_msg", payload: { type: "text", role: "assistant", text: "Here:", stop_reason: "completed" } },
    made("image/png", png),
    made("application/pdf", pdf),
    { timestamp: ts, type: "model_msg", payload: { type: "text", role: "assistant", text: "Done.", stop_reason: "completed" } },
    { timestamp: ts, type: "event_msg", payload: { type: "request_end", status: "completed" } },
  ];
  await page.setInputFiles("#import", { name: "made.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(lines.map((l) => JSON.stringify(l)).join("\n") + "\n") });
  await page.locator("#note", { hasText: `Imported ${sid}.` }).waitFor();
  await page.locator(`#sessions li[data-session-id="${sid}"] .session-open`).click();
  const files = page.locator("#transcript > .msg.file");
  await files.nth(1).waitFor();
  assert.deepEqual(await page.locator("#transcript > [data-item]:not(.notice)").evaluateAll((all) => all.map((e) => e.dataset.kind)), ["prompt", "request", "text", "file", "file", "text"]);
  assert.deepEqual(await files.locator(".label").allTextContents(), ["file · made by the model", "file · made by the model"]);
  assert.deepEqual(await files.locator(".body").allInnerTexts(), [`image-1.png · image/png · ${Buffer.from(png, "base64").length} bytes Download`, `file-2.pdf · application/pdf · ${Buffer.from(pdf, "base64").length} bytes Download`]);
  // The image, drawn from its data: URL as a prompt's is; the PDF, not.
  await page.waitForFunction(() => [...document.querySelectorAll("#transcript img")].every((i) => i.complete), null, { timeout: WAIT });
  assert.deepEqual(await files.nth(0).locator("img").evaluateAll((all) => all.map((i) => [i.alt, i.complete && i.naturalWidth > 0, i.src.startsWith("data:image/png;base64,")])), [["Image 1 of 1 made by the model", true, true]]);
  assert.equal(await files.nth(1).locator("img").count(), 0);
  const dir = await mkdtemp(join(tmpdir(), "floe-made-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [i, name, data] of [[1, "file-2.pdf", pdf], [0, "image-1.png", png]]) {
    const [download] = await Promise.all([page.waitForEvent("download", { timeout: RUN }), files.nth(i).getByRole("button", { name: `Download ${name}` }).click()]);
    assert.equal(download.suggestedFilename(), name);
    const file = join(dir, name);
    await download.saveAs(file);
    assert.deepEqual(await readFile(file), Buffer.from(data, "base64"), name);
  }
});

pageTest("playground: the composer takes images (the Attach image button, a paste, a drop), each with its remove button; they go with the prompt as image_url messages and come back after a reload; a refused type is named", async (page) => {
  await open(page);
  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");
  const alts = () => page.locator("#attachments img").evaluateAll((all) => all.map((i) => i.alt));

  // The button opens the file picker. It is a button of its own, in the
  // tab order, so Enter and Space open it too. (Pressed after a focus
  // here, Enter raced the page's own focus of the prompt once it loaded.)
  const attach = page.getByRole("button", { name: "Attach image" });
  assert.equal(await attach.count(), 1);
  assert.deepEqual(await attach.evaluate((b) => [b.tagName, b.tabIndex, b.disabled]), ["BUTTON", 0, false]);
  const [chooser] = await Promise.all([page.waitForEvent("filechooser"), attach.click()]);
  await chooser.setFiles([
    { name: "one.png", mimeType: "image/png", buffer: png },
    { name: "two.png", mimeType: "image/png", buffer: png },
  ]);
  await page.locator("#attachments img").nth(1).waitFor();
  assert.deepEqual(await alts(), ["Attached image 1: one.png", "Attached image 2: two.png"]);

  // A paste of an image file attaches it; the text stays the prompt's.
  await page.evaluate(() => {
    const gif = Uint8Array.from(atob("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([gif], "pasted.gif", { type: "image/gif" }));
    document.getElementById("prompt").dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
  });
  await page.locator("#attachments img").nth(2).waitFor();
  assert.deepEqual(await alts(), ["Attached image 1: one.png", "Attached image 2: two.png", "Attached image 3: pasted.gif"]);

  // A file of another type dropped on the composer is refused, named.
  await page.evaluate(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(["<svg xmlns='http://www.w3.org/2000/svg'/>"], "logo.svg", { type: "image/svg+xml" }));
    document.getElementById("composer").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await page.locator("#note", { hasText: "logo.svg not attached: it is image/svg+xml; the composer takes PNG, JPEG, GIF and WebP images." }).waitFor();
  assert.equal(await page.locator("#attachments li").count(), 3);

  // Removed by keyboard: the focus goes to the remove button taking its place.
  await page.getByRole("button", { name: "Remove image 2: two.png" }).press("Enter");
  await page.locator("#attachments li").nth(2).waitFor({ state: "detached" });
  assert.deepEqual(await alts(), ["Attached image 1: one.png", "Attached image 2: pasted.gif"]);
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), "Remove image 2: pasted.gif");

  // Sent with the prompt: drawn on it; the composer is empty again.
  await send(page, "help");
  await idle(page);
  assert.equal(await page.locator("#attachments").isHidden(), true);
  const prompt = page.locator("#transcript > .msg.prompt").last();
  const drawn = () =>
    prompt.locator("img").evaluateAll((all) => all.map((i) => [i.alt, i.src.slice(0, 22)]));
  const want = [
    ["Image 1 of 2 sent with the prompt", "data:image/png;base64,"],
    ["Image 2 of 2 sent with the prompt", "data:image/gif;base64,"],
  ];
  assert.deepEqual(await drawn(), want);

  // Stored: the Trace holds the prompt's text and one image_url record each.
  await page.click("#tab-trace");
  await page.locator("#trace li:last-child .type:text-is('request_end')").waitFor();
  assert.equal(await page.locator("#trace li .type:text-is('image_url')").count(), 2);
  await page.reload();
  await idle(page);
  await page.locator("#transcript > .msg.prompt img").nth(1).waitFor();
  assert.equal(await prompt.locator(".body").innerText(), "help");
  assert.deepEqual(await drawn(), want);
});

pageTest("playground: images pasted while a run is in flight go with the steering text, drawn with the delivered steering message; steering the run did not deliver gives its text and images back", async (page) => {
  await open(page);
  const paste = (name) =>
    page.evaluate((name) => {
      const png = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([png], name, { type: "image/png" }));
      document.getElementById("prompt").dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
    }, name);

  await send(page, "How long is store.go?");
  await decide(page, "list_files", "allow");
  await askCard(page, "count_lines").waitFor({ timeout: RUN });
  assert.equal(await page.locator("#send").innerText(), "Steer");
  await paste("screenshot.png");
  await page.locator("#attachments img").waitFor();
  await page.fill("#prompt", "look at this instead");
  await page.press("#prompt", "Enter");
  await page.locator('.chip:text("queued: look at this instead + 1 image(s)")').waitFor();
  assert.equal(await page.locator("#attachments").isHidden(), true, "the images went with the steering");
  assert.equal(await page.inputValue("#prompt"), "");
  await decide(page, "count_lines", "allow");
  await idle(page);
  assert.match(await lastReply(page), /You added: “look at this instead” with an image\./, "the model got the image with the text");
  const steering = page.locator("#transcript > .msg.user", { has: page.locator('.label:text("steering · delivered to the model")') });
  assert.equal(await steering.locator(".body").innerText(), "look at this instead");
  assert.deepEqual(
    await steering.locator("img").evaluateAll((all) => all.map((i) => [i.alt, i.src.slice(0, 22)])),
    [["Image 1 of 1 sent with the steering", "data:image/png;base64,"]],
  );
  assert.equal(await page.locator("#note").innerText(), "", "no note says the images stay");

  // Steering of images only, then Stop: its images come back.
  await send(page, "stream 3000");
  await paste("late.png");
  await page.locator("#attachments img").waitFor();
  await page.press("#prompt", "Enter");
  await page.locator('.chip:text("queued: 1 image(s)")').waitFor();
  assert.equal(await page.locator("#attachments").isHidden(), true);
  await page.click("#stop");
  await idle(page);
  assert.match(await page.locator("#note").innerText(), /1 steering message\(s\) not delivered: the run ended first\. Their images are back in the composer\./);
  assert.deepEqual(await page.locator("#attachments img").evaluateAll((all) => all.map((i) => i.alt)), ["Attached image 1: late.png"]);
});

// A model without vision (DeepSeek's answers 400 to any image): Settings
// say so for the OpenAI adapters and Anthropic's (DeepSeek's
// Anthropic-compatible API takes no images either), the composer says the
// images go as a text, and they do, the history's too once a session goes
// on with such a model; a model that takes images gets them again.
pageTest("playground: a model without vision: its images go as a text, said under the composer and in the header; a session going on with a model that takes them sends them again", async (page, ctx, log, t) => {
  const server = await modelServer(t);
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await open(page);
  // The setting is offered for the OpenAI adapters and Anthropic, not for the scripted demo.
  await page.click("#open-settings");
  for (const [provider, shown] of [["openai-compatible", true], ["openai", true], ["openai-responses", true], ["anthropic", true], ["scripted", false]]) {
    await page.selectOption("#set-provider", provider);
    assert.equal(await page.locator("#set-images").isVisible(), shown, provider);
  }
  assert.equal(await page.isChecked("#set-images"), true, "a model takes images by default");
  await page.click("#settings-cancel");

  await configure(page, { provider: "openai-compatible", baseURL: url, model: "deepseek-chat", images: false });
  assert.match(await page.locator("#model-label").innerText(), /deepseek-chat · no images/);
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).noImages, true);
  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");
  assert.equal(await page.locator("#attach-hint").isVisible(), false);
  await page.setInputFiles("#attach-file", { name: "shot.png", mimeType: "image/png", buffer: png });
  await page.locator("#attachments img").waitFor();
  assert.equal(await page.locator("#attach-hint").innerText(), "This session's model takes no images (Settings): they are stored with your message, and the model gets the text “[image not sent: the model takes no images]” in their place.");
  const id = await shownID(page);
  await send(page, "What is in the picture?");
  await idle(page);
  assert.equal(await page.locator("#attach-hint").isVisible(), false, "the hint stays with no image attached");
  const sent = JSON.stringify(server.requests.at(-1).body.messages);
  assert.match(sent, /\[image not sent: the model takes no images\]/);
  assert.doesNotMatch(sent, /data:image\/png/, "an image reached a model without vision");
  assert.ok((await page.locator("#transcript img").count()) > 0, "the prompt's image is not drawn");

  // A model that takes images: the session reopened sends its image.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "gpt-4o", images: true });
  assert.doesNotMatch(await page.locator("#model-label").innerText(), /no images/);
  await page.setInputFiles("#attach-file", { name: "shot.png", mimeType: "image/png", buffer: png });
  await page.locator("#attachments img").waitFor();
  assert.equal(await page.locator("#attach-hint").isVisible(), false, "a model with vision gets the hint");
  await page.locator('#attachments button[data-index="0"]').click();
  await rowOf(page, id).locator(".session-open").click();
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
  assert.doesNotMatch(await page.locator("#note").innerText(), /takes no images/);
  await send(page, "Look again.");
  await idle(page);
  assert.match(JSON.stringify(server.requests.at(-1).body.messages), /data:image\/png/, "the image did not reach a model that takes images");

  // Back to the model without vision: the session reopened says its image goes as a text.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "deepseek-chat", images: false });
  await rowOf(page, id).locator(".session-open").click();
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).last().waitFor();
  await page.locator("#note", { hasText: "Its model takes no images (Settings): the 1 image(s) of this session go to it as a text" }).waitFor();
  await send(page, "And now?");
  await idle(page);
  assert.doesNotMatch(JSON.stringify(server.requests.at(-1).body.messages), /data:image\/png/);

  // Through Anthropic's Messages API (DeepSeek's Anthropic-compatible
  // endpoint): the image goes as the same text, its bytes not at all.
  const messages = await replayServer(t, (req, res) => writeResponse(res, { status: 200, headers: SSE_HEADERS, body: anthropicStream({ text: ["A picture."] }) }), { cors: new URL(baseURL()).origin });
  await configure(page, { provider: "anthropic", baseURL: messages.url + "/v1", model: "deepseek-chat", key: "sk-x", images: false });
  assert.match(await page.locator("#model-label").innerText(), /deepseek-chat · no images/);
  await page.setInputFiles("#attach-file", { name: "shot.png", mimeType: "image/png", buffer: png });
  await page.locator("#attachments img").waitFor();
  assert.match(await page.locator("#attach-hint").innerText(), /takes no images \(Settings\)/);
  await send(page, "What is in it?");
  await idle(page);
  assert.equal(await lastReply(page), "A picture.");
  const toAnthropic = JSON.parse(messages.requests.at(-1).body).messages;
  assert.match(JSON.stringify(toAnthropic), /\[image not sent: the model takes no images\]/);
  assert.doesNotMatch(JSON.stringify(toAnthropic), /"type":"image"|iVBORw0KGgo/, "an image reached a model without vision");
});

// Settings that the browser's local storage refuses to keep (full: a long
// system prompt, a demo script) apply to the page, and the note says they
// are not kept after a reload.
pageTest("playground: Settings that local storage refuses apply to the page and the note says they are not kept", async (page) => {
  await open(page);
  await page.evaluate(() => {
    const set = Storage.prototype.setItem;
    Storage.prototype.setItem = function (key, value) {
      if (key === "floe-playground:settings") throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
      return set.call(this, key, value);
    };
  });
  await page.click("#open-settings");
  await page.fill("#set-compact-tokens", "5000");
  await page.click("#settings-save");
  await page.locator("#settings").waitFor({ state: "hidden" });
  await page.locator("#note", { hasText: "Settings apply to the next new session, but are not kept after a reload (this browser's local storage refused to keep it: The quota has been exceeded.)" }).waitFor();
  await page.click("#open-settings");
  assert.equal(await page.inputValue("#set-compact-tokens"), "5000", "the page uses them");
  await page.click("#settings-cancel");
  assert.equal(await page.evaluate(() => localStorage.getItem("floe-playground:settings")), null);
});

pageTest("playground: with local storage full, a rename is kept for the page and the note says so; a new session works", async (page) => {
  // Titles, the session to reopen and import times went to local storage
  // unguarded: its refusal was a panic, with its Go stack, on the page.
  await open(page);
  await send(page, "echo: one");
  await idle(page);
  await page.evaluate(() => {
    Storage.prototype.setItem = function () {
      throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
    };
  });
  await showSessions(page);
  await page.locator("#sessions li.session [data-do=rename]").first().click();
  await page.fill(".rename-input", "Kept for the page");
  await page.press(".rename-input", "Enter");
  await page.locator("#sessions .title", { hasText: "Kept for the page" }).waitFor();
  await page.locator("#note", { hasText: "Renamed, but the title is not kept after a reload (this browser's local storage refused to keep it: The quota has been exceeded.)" }).waitFor();
  await page.click("#reset");
  await send(page, "echo: two");
  await idle(page);
  assert.equal(await lastReply(page), "two");
  assert.equal(await page.locator("#error").isVisible(), false, await page.locator("#error").innerText());
});

pageTest("playground: a tool output is cut by characters: 700 Japanese ones (2,100 bytes) are shown whole, without \"show all\"; 1,300 are cut", async (page) => {
  // Cut by bytes, the first had a "show all" that showed nothing more.
  await open(page);
  const output = async (n) => {
    await send(page, `js: "あ".repeat(${n})`);
    await decide(page, "run_js", "allow");
    await idle(page);
    return page.locator("#transcript > .card").last();
  };
  let card = await output(700);
  assert.ok((await card.locator(".output").innerText()).includes("あ".repeat(700)));
  assert.equal(await card.locator('button.more[data-part="output"]').isVisible(), false, "show all over an output shown whole");
  card = await output(1300);
  assert.ok(!(await card.locator(".output").innerText()).includes("あ".repeat(1200)), "1,300 characters shown uncut");
  await card.locator('button.more[data-part="output"]', { hasText: "show all" }).click();
  await card.locator('button.more[data-part="output"]', { hasText: "show less" }).waitFor();
  assert.ok((await card.locator(".output").innerText()).includes("あ".repeat(1300)));
});

// An imported session's last activity is its last record's time, not the
// import's (the time the store gives it): the list sorts it by when it
// was last used, across a reload, until it is used again.
pageTest("playground: an imported session is listed by the time of its last record until it is used again", async (page) => {
  await open(page);
  const current = await shownID(page);
  await send(page, "echo: today");
  await idle(page);
  await rowOf(page, current).waitFor();
  const old = "session-2024-01-02-12-00-00-0badcafe";
  const meta = { timestamp: "2024-01-02T12:00:00.000Z", type: "session_meta", payload: { session_id: old, provider: "floe-playground", model_id: "scripted", model_context_window: 32000, system_prompt: "You are the Floe playground's scripted model. Explore the workspace with its tools, then report.", agent_state: "memory", workspace: "opfs://workspace" } };
  const prompt = { timestamp: "2024-01-02T12:30:00.000Z", type: "model_msg", payload: { type: "text", role: "user", text: "An old question", stop_reason: "completed" } };
  const body = [meta, prompt].map((m) => JSON.stringify(m) + "\n").join("");
  await page.setInputFiles("#import", { name: `${old}_001.jsonl`, mimeType: "application/jsonl", buffer: Buffer.from(body) });
  await page.locator("#note", { hasText: `Imported ${old}.` }).waitFor();
  const order = () => page.locator("#sessions li.session").evaluateAll((all) => all.map((li) => li.dataset.sessionId));
  await page.waitForFunction((n) => document.querySelectorAll("#sessions li.session").length === n, 2);
  assert.deepEqual(await order(), [current, old], "the imported session is listed as used now");
  assert.match(await rowOf(page, old).locator(".when").innerText(), /^Jan 2 /);
  await page.reload();
  await idle(page);
  await rowOf(page, old).waitFor();
  assert.deepEqual(await order(), [current, old]);
  assert.match(await rowOf(page, old).locator(".when").innerText(), /^Jan 2 /);
  // Used again: now its last activity.
  await rowOf(page, old).locator(".session-open").click();
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
  await send(page, "echo: again");
  await idle(page);
  await page.waitForFunction((id) => document.querySelector("#sessions li.session")?.dataset.sessionId === id, old);
  assert.doesNotMatch(await rowOf(page, old).locator(".when").innerText(), /^Jan 2 /);
  assert.equal(await page.evaluate(() => localStorage.getItem("floe-playground:imported")), "{}");
});

// An import over its bound (MaxImportBytes, 128 MiB) is refused before a
// byte of it is read, naming the file, its size and the bound; the
// sessions imported before stay. The page read a chosen file whole, and
// one of hundreds of MB ran it out of memory. The File is 129 parts of one
// 1 MiB Blob, which the browser shares rather than copies.
pageTest("playground: an import over its bound is refused before it is read, naming the file, its size and the bound; what was imported stays", async (page) => {
  await open(page);
  const old = "session-2024-01-02-12-00-00-0badcafe";
  const meta = { timestamp: "2024-01-02T12:00:00.000Z", type: "session_meta", payload: { session_id: old, provider: "floe-playground", model_id: "scripted", model_context_window: 32000, system_prompt: "You are the Floe playground's scripted model.", agent_state: "memory", workspace: "opfs://workspace" } };
  const prompt = { timestamp: "2024-01-02T12:30:00.000Z", type: "model_msg", payload: { type: "text", role: "user", text: "An old question", stop_reason: "completed" } };
  const body = [meta, prompt].map((m) => JSON.stringify(m) + "\n").join("");
  await page.setInputFiles("#import", { name: `${old}_001.jsonl`, mimeType: "application/jsonl", buffer: Buffer.from(body) });
  await page.locator("#note", { hasText: `Imported ${old}.` }).waitFor();
  const big = "session-2024-01-03-12-00-00-0badcafe_001.jsonl";
  await page.evaluate((name) => {
    const mib = new Blob([new Uint8Array(1 << 20)]);
    const dt = new DataTransfer();
    dt.items.add(new File(Array(129).fill(mib), name));
    const input = document.querySelector("#import");
    input.files = dt.files;
    input.dispatchEvent(new Event("change"));
  }, big);
  const note = page.locator("#note", { hasText: "Import refused" });
  await note.waitFor({ timeout: RUN });
  const want = `Import refused: "${big}" is 135266304 bytes (129.0 MiB), over the 134217728 bytes (128 MiB) an import reads: nothing was imported`;
  assert.ok((await note.innerText()).includes(want), await note.innerText());
  await showSessions(page);
  await rowOf(page, old).waitFor();
  await page.reload();
  await idle(page);
  await rowOf(page, old).waitFor();
});

// A stored session's open that the user's next choice made stale (New
// session clicked while its Trace was read) is dropped: the open landed
// after the new session was shown and replaced it. The test holds back the
// news that IndexedDB's reads completed until the new session is shown,
// then lets them through and waits until none is left, each one's handler
// (and the Go code it wakes) having run.
pageTest("playground: New session clicked while a stored session is opened wins: the open, stale, is dropped", async (page) => {
  await open(page);
  const first = await shownID(page);
  await send(page, "echo: first");
  await idle(page);
  await showSessions(page);
  await rowOf(page, first).waitFor();
  await page.click("#reset");
  await page.waitForFunction((id) => document.querySelector("#session-id").textContent !== id, first);
  await holdCompletions(page, "readonly");
  await rowOf(page, first).locator(".session-open").click();
  await page.locator("#note", { hasText: `Opening ${first}` }).waitFor();
  const before = await shownID(page);
  await page.click("#reset");
  await page.waitForFunction((id) => document.querySelector("#session-id").textContent !== id, before);
  const chosen = await shownID(page);
  await page.evaluate(() => window.__release());
  await page.waitForFunction(() => window.__busy === 0, null, { timeout: RUN });
  await idle(page);
  assert.equal(await shownID(page), chosen, "the stale open replaced the new session");
  assert.equal(await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).count(), 0);
});

// An export while a run is in flight holds every record the run made
// until then: it read the store past the records still on their way to
// it. The test holds back the page's news that a write to IndexedDB
// completed, so that the records the run makes meanwhile wait in the page;
// it lets the news through once the export is done (without the fix) or
// once the page says it waits for those records.
pageTest("playground: an export during a run holds the records not yet stored, and says it was made during the run", async (page, ctx, log, t) => {
  await open(page);
  const id = await shownID(page);
  await send(page, "How long is store.go?");
  await askCard(page, "list_files").waitFor({ timeout: RUN });
  await rowOf(page, id).waitFor();
  await holdCompletions(page, "readwrite");
  await decide(page, "list_files", "allow");
  await askCard(page, "count_lines").waitFor({ timeout: RUN });
  const [download] = await Promise.all([
    page.waitForEvent("download", { timeout: RUN }),
    (async () => {
      await rowOf(page, id).locator('button:text("Export")').click();
      await page.locator("#note", { hasText: /^Export(ing|ed) / }).waitFor();
      await page.evaluate(() => window.__release());
    })(),
  ]);
  const dir = await mkdtemp(join(tmpdir(), "floe-export-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, download.suggestedFilename());
  await download.saveAs(file);
  const records = (await readFile(file, "utf8")).trim().split("\n").map((l) => JSON.parse(l));
  // The request's second call, made after the first one's approval (whose
  // record was on its way to the store when the test held it).
  const calls = records.filter((r) => r.payload.type === "tool_call").map((r) => r.payload.name);
  assert.deepEqual(calls, ["list_files", "count_lines"], "the export left out the records the run had made");
  await page.locator("#note", { hasText: `Exported ${id} (1 file(s)) during its run: every record until now; export again once the run ends for the rest.` }).waitFor();
  await decide(page, "count_lines", "allow");
  await idle(page);
});

// An export of the session shown before, right after switching to another
// one, holds the records of its last run: it read the store past the
// records still on their way to it (queued in the Batcher the page had
// let go). The test holds back the news of IndexedDB's writes, as the one
// above does, while the first session's last run ends and the page
// switches to a new session.
pageTest("playground: an export of the session shown before, right after a switch, holds its last records", async (page, ctx, log, t) => {
  await open(page);
  const id = await shownID(page);
  await send(page, "echo: first");
  await idle(page);
  await rowOf(page, id).waitFor();
  await holdCompletions(page, "readwrite");
  await send(page, "echo: the last words");
  await idle(page);
  await page.click("#reset");
  await otherSession(page, id);
  const [download] = await Promise.all([
    page.waitForEvent("download", { timeout: RUN }),
    (async () => {
      await rowOf(page, id).locator('button:text("Export")').click();
      await page.locator("#note", { hasText: /^Export(ing|ed) / }).waitFor();
      await page.evaluate(() => window.__release());
    })(),
  ]);
  const dir = await mkdtemp(join(tmpdir(), "floe-export-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, download.suggestedFilename());
  await download.saveAs(file);
  const records = (await readFile(file, "utf8")).trim().split("\n").map((l) => JSON.parse(l));
  const answers = records.filter((r) => r.payload.type === "text" && r.payload.role === "assistant").map((r) => r.payload.text);
  assert.deepEqual(answers, ["first", "the last words"], "the export left out the last run's records");
  await page.locator("#note", { hasText: `Exported ${id} (1 file(s)).` }).waitFor();
});

// A teacher's demo script, loaded from a file in Settings: a bad file is
// refused naming its rule, line and field; the example file answers the
// prompts it matches (thinking, answer, two tool calls each approved, then
// its text), and is kept over a reload; cleared, the scripted demo answers
// from its own script again.
pageTest("playground: a demo script loaded in Settings answers the prompts it matches; a bad one is refused naming the rule; kept over a reload; cleared", async (page, ctx, log, t) => {
  await open(page);
  const dir = await mkdtemp(join(tmpdir(), "floe-demo-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const bad = join(dir, "lesson.json");
  await writeFile(bad, JSON.stringify([{ match: "a", say: "b" }, { match: "c", calls: [{ tool: "rm_rf" }] }], null, 2));
  await page.click("#open-settings");
  await page.locator("#set-demo-status", { hasText: "None: the scripted demo answers from its own script." }).waitFor();
  await page.setInputFiles("#set-demo-file", bad);
  await page.locator("#set-demo-file-error", { hasText: 'lesson.json: rule 2 (line 6): calls[0].tool: unknown tool "rm_rf"' }).waitFor();
  await page.setInputFiles("#set-demo-file", fileURLToPath(new URL("../../examples/playground-demo.json", import.meta.url)));
  await page.locator("#set-demo-status", { hasText: "Loaded: playground-demo.json, 3 rule(s)." }).waitFor();
  assert.equal(await page.locator("#set-demo-file-error").isVisible(), false, "the refusal stays");
  await page.click("#settings-cancel");
  // The session shown was empty: the script answers in a new one at once.
  await page.locator("#note", { hasText: "Demo script playground-demo.json loaded (3 rule(s))." }).waitFor();
  assert.match(await page.locator("#model-label").innerText(), /scripted demo \(offline\) · demo script playground-demo\.json/);

  await send(page, "How long is the store?");
  await decide(page, "read_file", "allow");
  await decide(page, "count_lines", "allow");
  await idle(page);
  assert.match(await lastReply(page), /^That was two tool calls: read_file returned the file and count_lines counted it\./);
  assert.match(await page.locator('#transcript > .msg.text[data-kind="text"] .body').first().innerText(), /^Let me open it and count its lines\.$/);
  assert.match(await page.locator('#transcript > .card[data-call-id="call_1_1"] .output').innerText(), /Package store keeps notes/);
  await page.locator("#transcript details.thinking", { hasText: "The student wants to see tools at work" }).waitFor();

  await page.reload();
  await idle(page);
  assert.match(await page.locator("#model-label").innerText(), /demo script playground-demo\.json/);
  await send(page, "What is a tool call?");
  await idle(page);
  assert.match(await lastReply(page), /^A tool call is the model asking the program around it/);

  await page.click("#open-settings");
  await page.locator("#set-demo-status", { hasText: "Loaded: playground-demo.json, 3 rule(s)." }).waitFor();
  await page.click("#set-demo-clear");
  await page.locator("#set-demo-status", { hasText: "None:" }).waitFor();
  await page.click("#settings-cancel");
  await page.locator("#note", { hasText: "Demo script cleared. It applies to the next new session." }).waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem("floe-playground:demo")), null);
  await page.click("#reset");
  await page.locator("#model-label", { hasText: /^Model: scripted demo \(offline\)$/ }).waitFor();
  await send(page, "What is a tool call?");
  await decide(page, "list_files", "deny");
  await decide(page, "count_lines", "deny");
  await idle(page);
});

// Safari before 26 (iOS 17 and 18 too) has the private file system but no
// FileSystemFileHandle.createWritable: a page cannot write a file there.
// The workspace is kept in memory, as without OPFS, and the demo's files
// are there: they were seeded into a directory no write reached, an empty
// workspace, and every write_file failed.
pageTest("playground: an OPFS without createWritable (Safari before 26): the workspace is in memory, seeded and writable, and the page says so", async (page) => {
  await page.addInitScript(() => {
    delete FileSystemFileHandle.prototype.createWritable;
  });
  await open(page);
  assert.equal(await page.locator("#tab-files").innerText(), "Files · in memory");
  assert.ok(await page.locator("#intro-memory").isVisible(), "no note in the intro");
  await page.click("#tab-files");
  await page.locator('#files [data-path="internal/store/store.go"]').waitFor();
  await send(page, "write notes/todo.md: # Todo");
  await decide(page, "write_file", "allow");
  await idle(page);
  await page.locator('#files [data-path="notes/todo.md"]').waitFor();
  assert.doesNotMatch(await page.locator("#transcript > .card .output").last().innerText(), /createWritable|error/i);
});

// A write_file stopped while its file opens (createWritable not answered
// yet): the writable that comes afterwards is aborted, not left open with
// its swap file.
pageTest("playground: a workspace write stopped while its file opens aborts the writable that comes after", async (page) => {
  await page.addInitScript(() => {
    const create = FileSystemFileHandle.prototype.createWritable;
    window.__held = { asked: false, ended: null };
    FileSystemFileHandle.prototype.createWritable = function (...args) {
      if (this.name !== "held.md") return create.apply(this, args);
      window.__held.asked = true;
      return new Promise((resolve, reject) => {
        window.__release = () =>
          create.apply(this, args).then((w) => {
            for (const m of ["close", "abort"]) {
              const f = w[m].bind(w);
              w[m] = (...a) => ((window.__held.ended = m), f(...a));
            }
            resolve(w);
          }, reject);
      });
    };
  });
  await open(page);
  await send(page, "write held.md: never");
  await decide(page, "write_file", "allow");
  await page.waitForFunction(() => window.__held.asked, null, { timeout: RUN });
  await page.click("#stop");
  await idle(page);
  assert.equal(await page.evaluate(() => window.__held.ended), null);
  await page.evaluate(() => window.__release());
  await page.waitForFunction(() => window.__held.ended !== null, null, { timeout: RUN });
  assert.equal(await page.evaluate(() => window.__held.ended), "abort");
});

// Where the browser refuses the page its private file system (Firefox's
// private windows, WebKit's ephemeral sessions), the workspace is kept in memory: the page says so
// where the workspace is shown, not only in the console.
pageTest("playground: without OPFS the page says the workspace is in memory and its files last until a reload", async (page, ctx) => {
  await page.addInitScript(() => {
    navigator.storage.getDirectory = () => Promise.reject(new DOMException("The operation is insecure.", "SecurityError"));
  });
  await open(page);
  const note = "the workspace is kept in memory, and its files last until the page is closed or reloaded.";
  assert.ok(await page.locator("#intro-memory").isVisible(), "no note in the intro");
  assert.match(await page.locator("#intro-memory").innerText(), new RegExp(note.replace(/[.]/g, "\\.")));
  assert.equal(await page.locator("#intro-workspace").innerText(), "kept in memory");
  assert.equal(await page.locator("#tab-files").innerText(), "Files · in memory");
  await page.click("#tab-files");
  assert.equal(await page.locator("#files-memory").getAttribute("role"), "note");
  assert.ok(await page.locator("#files-memory").isVisible(), "no note in the Files panel");
  assert.match(await page.locator("#files-memory").innerText(), /these files last until the page is closed or reloaded/);
  // With OPFS: none of it.
  await page.close();
  const other = await ctx.newPage();
  await open(other);
  assert.equal(await other.locator("#intro-memory").isVisible(), false);
  assert.equal(await other.locator("#tab-files").innerText(), "Files");
  await other.click("#tab-files");
  assert.equal(await other.locator("#files-memory").isVisible(), false);
  assert.match(await other.locator("#files-hint").innerText(), /Origin Private File System/);
});

// Deleting a workspace file removes the directories it leaves empty: a
// write_file of such a directory's path then writes the file, as in the
// in-memory workspace. OPFS kept "notes" after notes/a.md was deleted, and
// writing "notes" failed, "not a file". An empty directory left by an
// earlier version gives way to a file too; one that holds a file does not.
pageTest("playground: deleting a workspace file removes the directories it leaves empty; a file may take an empty directory's path", async (page) => {
  await open(page);
  const entries = (dir) =>
    page.evaluate(async (dir) => {
      let d = await (await navigator.storage.getDirectory()).getDirectoryHandle("workspace");
      for (const s of dir ? dir.split("/") : []) d = await d.getDirectoryHandle(s);
      const out = [];
      for await (const [name, h] of d.entries()) out.push(name + (h.kind === "directory" ? "/" : ""));
      return out.sort();
    }, dir);
  const run = async (prompt, tool) => {
    await send(page, prompt);
    await decide(page, tool, "allow");
    await idle(page);
    return page.locator("#transcript > .card .output").last().innerText();
  };
  assert.match(await run("write notes/deep/a.md: one", "write_file"), /wrote 3 bytes to notes\/deep\/a\.md/);
  assert.match(await run("write notes/b.md: two", "write_file"), /wrote 3 bytes to notes\/b\.md/);
  assert.match(await run("delete notes/deep/a.md", "delete_file"), /deleted notes\/deep\/a\.md/);
  assert.deepEqual(await entries("notes"), ["b.md"], "notes/deep is left behind");
  assert.match(await run("delete notes/b.md", "delete_file"), /deleted notes\/b\.md/);
  assert.ok(!(await entries("")).includes("notes/"), "notes is left behind");
  assert.match(await run("write notes: three", "write_file"), /wrote 5 bytes to notes/);
  assert.ok((await entries("")).includes("notes"));
  // An empty directory left behind before: the file takes its path.
  await page.evaluate(async () => {
    const w = await (await navigator.storage.getDirectory()).getDirectoryHandle("workspace");
    await w.getDirectoryHandle("old", { create: true });
  });
  assert.match(await run("write old: four", "write_file"), /wrote 4 bytes to old/);
  assert.ok((await entries("")).includes("old"));
  // A directory that holds a file is no file's.
  assert.match(await run("write internal: five", "write_file"), /not a file: "internal" is a directory/);
  assert.deepEqual(await entries("internal"), ["store/", "web/"]);
  await page.click("#tab-files");
  await page.locator('#files [data-path="notes"]').waitFor();
  await page.locator('#files [data-path="old"]').waitFor();
});

// Markdown nested thousands deep (">" 5,000 times: 5 KB) was drawn as
// as many nested elements, and Chromium's tab crashed laying them out:
// past 64 levels, quotes, lists and emphasis are drawn flat.
pageTest("playground: a reply of Markdown nested 5,000 deep is drawn, 64 levels deep at most", async (page, ctx, log, t) => {
  const reply = ">".repeat(5000) + " deep quote";
  const server = await replayServer(t, (req, res) => writeResponse(res, { status: 200, headers: SSE_HEADERS, body: anthropicStream({ text: [reply] }) }), { cors: new URL(baseURL()).origin });
  await open(page);
  await configure(page, { provider: "anthropic", baseURL: server.url + "/v1", model: "claude-test", key: "sk-ant-x" });
  await send(page, "Nest");
  await idle(page);
  const body = page.locator("#transcript > .msg.text .body").last();
  assert.match(await body.innerText(), /deep quote/);
  const depth = await body.evaluate((b) => {
    let most = 0;
    for (const e of b.querySelectorAll("*")) {
      let n = 0;
      for (let x = e; x !== b; x = x.parentElement) n++;
      most = Math.max(most, n);
    }
    return most;
  });
  assert.ok(depth <= 64 + 4, `${depth} elements deep`);
});

// An import of the session the page runs is refused, naming it, and
// changes nothing: the page's records not stored yet, it took the id, and
// the run's records went into the imported session (or were refused).
pageTest("playground: an import of the session whose run is in flight in the page is refused, naming it; the run goes on and its Trace is its own", async (page) => {
  await open(page);
  const current = await shownID(page);
  await send(page, "How long is store.go?");
  await askCard(page, "list_files").waitFor({ timeout: RUN });
  const meta = { timestamp: "2024-01-02T12:00:00.000Z", type: "session_meta", payload: { session_id: current, provider: "floe-playground", model_id: "scripted", model_context_window: 32000, system_prompt: "imported", agent_state: "memory", workspace: "opfs://workspace" } };
  const prompt = { timestamp: "2024-01-02T12:30:00.000Z", type: "model_msg", payload: { type: "text", role: "user", text: "An imported question", stop_reason: "completed" } };
  const body = [meta, prompt].map((m) => JSON.stringify(m) + "\n").join("");
  await page.setInputFiles("#import", { name: `${current}_001.jsonl`, mimeType: "application/jsonl", buffer: Buffer.from(body) });
  const note = await page.locator("#note", { hasText: "Import refused" }).innerText({ timeout: RUN });
  assert.match(note, new RegExp(`^Import refused: session "${current}" is busy: it runs in this page`), note);
  await decide(page, "list_files", "allow");
  await decide(page, "count_lines", "allow");
  await idle(page);
  assert.match(await lastReply(page), /add up to \d+ lines/);
  await storedPrompt(page, current);
  assert.match(await rowOf(page, current).locator(".title").innerText({ timeout: RUN }), /How long is store\.go\?/, "the session's row: its own first prompt");
});
